"""Deployment on Gradescope: the autograder zip (:mod:`.autograder_zip`) and what its ``run_autograder``
does inside Gradescope's container (:mod:`.container`), writing Gradescope's results.json
(:mod:`.results_json`).

Gradescope's contract, from https://gradescope-autograders.readthedocs.io/en/latest/specs/: the zip holds
``setup.sh`` (run once, as root, when the image is built) and ``run_autograder`` at its root, unpacked in
``/autograder/source``; each submission's files are put in ``/autograder/submission``, ``run_autograder``
runs in ``/autograder`` and must leave ``/autograder/results/results.json``.
"""
