"""The ``seqgrade`` command line. ``main(argv) -> int`` is the only place that prints errors and picks
exit codes: 0 when a result was produced (whatever the score), 2 for usage errors, 3 when the sandbox
cannot run on this machine.

``main`` and ``run`` (grader.cli.main) parse the arguments (grader.cli.parser) and hand them to one command:
``grade`` (grader.cli.grade), ``serve``, ``list``, ``batch`` and ``demo``, each in a module of its name; the
course, staff, similarity, Gradescope and audit commands are registered by their own packages.
"""

from .main import main, run
from .parser import build_parser

__all__ = ["build_parser", "main", "run"]
