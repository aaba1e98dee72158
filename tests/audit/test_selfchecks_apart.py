"""The audit runs a mutant's self-checks in a child process (grader.audit.selfchecks.run_selfchecks_apart): a
Triton kernel runs on raw memory in Triton's interpreter, and a mutant that stores out of bounds (the audit of
recursive_attention's bonus makes eight) corrupts the process it runs in. The verdict crosses back intact, and a
child that dies is a failure the student would see, not a worker the audit loses."""

import nbformat
import pytest

from grader.audit.selfchecks import load_selfcheck_module, run_selfchecks_apart

SELFCHECK = """
def check_f(f):
    assert f() == 1, "f() should be 1"
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "selfcheck.py").write_text(SELFCHECK)
    return tmp_path


def _notebook(folder, body: str):
    v4 = nbformat.v4
    nb = v4.new_notebook(
        cells=[
            v4.new_code_cell("import selfcheck", id="imports"),
            v4.new_code_cell(f"def f():\n{body}", id="f", metadata={"nbgrader": {"grade_id": "f"}}),
            v4.new_code_cell(
                "# Self-check: f\nselfcheck.check_f(f)",
                id="selfcheck-f",
                metadata={"nbgrader": {"grade_id": "selfcheck_f"}},
            ),
        ]
    )
    path = folder / "nb.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize(
    "body,status,message",
    [
        ("    return 1", "ok", ""),
        ("    return 2", "failed", "AssertionError: f() should be 1"),
        (
            "    import os\n    os.abort()  # what glibc does on finding its heap corrupted",
            "failed",
            "the notebook's process died while its self-checks ran: signal 6 (SIGABRT)",
        ),
    ],
)
def test_a_self_check_run_apart_gives_its_verdict_and_survives_a_dying_kernel(folder, body, status, message):
    verdict = run_selfchecks_apart(_notebook(folder, body), load_selfcheck_module(folder), budget_s=30)
    assert (verdict.status, verdict.message) == (status, message)
    assert verdict.cell == ("selfcheck_f" if status == "failed" and "died" not in message else "")
