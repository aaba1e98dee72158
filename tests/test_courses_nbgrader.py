"""nbgrader's own commands on the course, as an instructor and a student run them: generate_assignment and
autograde give every assignment's solution full marks and its release nothing (hidden tests run in the
student's kernel), and validate (the student's Validate button) fails a notebook whose self-check fails. Apart
from tests/test_courses.py so that the two, each minutes long, run on different workers of a parallel suite."""

import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from grader.assignments.registry import ASSIGNMENTS
from grader.course.release import release
from grader.notebook import grade_id as _grade_id

from .nbgrader_course import generated

COURSES = [a for a in ASSIGNMENTS if a != "sequence_models"]  # sequence_models: tests/test_assignment.py


@pytest.mark.slow
@pytest.mark.parametrize("assignment", COURSES)
def test_nbgrader_autograde_gives_the_solution_full_marks_and_the_release_nothing(assignment, tmp_path):
    """nbgrader's own generate_assignment and autograde (hidden tests run in the student's kernel): the
    solution's self-checks pass, each printing one line, and it earns every automatic point; the release's
    self-check cells fail with NotImplementedError ("not implemented yet"), and it earns nothing."""
    course, _ = generated(assignment, tmp_path / "course")
    released = course.root / "release" / assignment
    notebook = ASSIGNMENTS[assignment].notebook
    solution = release(assignment, tmp_path / "solution", solutions=True) / notebook
    for student, source in (("solution", solution), ("stubs", released / notebook)):
        folder = course.root / "submitted" / student / assignment
        folder.mkdir(parents=True)
        shutil.copy(source, folder / notebook)
        for helper in ("selfcheck.py", "selfcheck_base.py"):
            shutil.copy(released / helper, folder)
    course.nbgrader("autograde", assignment)
    from nbgrader.api import Gradebook

    auto = {f"test_{e.id}": e.max_points for e in ASSIGNMENTS[assignment].exercises if e.kind != "manual"}
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gb:
        for student, want in (("solution", auto), ("stubs", {k: 0.0 for k in auto})):
            sub = gb.find_submission_notebook(notebook.removesuffix(".ipynb"), assignment, student)
            assert {g.name: g.auto_score for g in sub.grades if g.name.startswith("test_")} == want, student
    for student in ("solution", "stubs"):
        graded = nbformat.read(course.root / "autograded" / student / assignment / notebook, as_version=4)
        checks = [c for c in graded.cells if (_grade_id(c) or "").startswith("selfcheck_")]
        assert checks
        for cell in checks:
            text = "".join(o.get("text", "") for o in cell.outputs)
            errors = [o for o in cell.outputs if o.output_type == "error"]
            if student == "solution":  # one line, no error, no echoed True/False
                assert text.startswith("[ok] ") and text.count("\n") == 1 and not errors, (_grade_id(cell), text)
                assert not [o for o in cell.outputs if o.output_type == "execute_result"], _grade_id(cell)
            elif ASSIGNMENTS[assignment].exercise(_grade_id(cell).removeprefix("selfcheck_")).bonus:
                # a bonus left undone fails nothing: its self-check says so in one line
                assert text.startswith("[skipped] ") and text.count("\n") == 1 and not errors, (_grade_id(cell), text)
            else:  # the stub's NotImplementedError fails the cell, as nbgrader's convention has it
                assert [e.ename for e in errors] == ["NotImplementedError"], (_grade_id(cell), cell.outputs)
                assert "not implemented yet" in errors[0].evalue


@pytest.mark.slow
def test_nbgrader_validate_reports_a_failing_self_check(tmp_path):
    """`nbgrader validate` (the student's Validate button) fails a notebook whose self-check fails and
    names that self-check; it passes the solution. Self-check cells are 0-point grade cells for this."""
    from grader.assignments.sequence_models.samples import WRONG as SEQUENCE_MODELS_WRONG

    folder = release("sequence_models", tmp_path / "rel", solutions=True)
    notebook = folder / ASSIGNMENTS["sequence_models"].notebook
    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        if _grade_id(cell) == "seq2col":
            cell.source = SEQUENCE_MODELS_WRONG["seq2col"]
    nbformat.write(nb, folder / "wrong.ipynb")
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    said = {}
    for name in ("wrong.ipynb", notebook.name):
        proc = subprocess.run(
            [sys.executable, "-m", "nbgrader", "validate", name],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        said[name] = proc.stdout + proc.stderr
    assert "VALIDATION FAILED" in said["wrong.ipynb"] and "# Self-check: seq2col" in said["wrong.ipynb"]
    assert "Success! Your notebook passes all the tests." in said[notebook.name], said[notebook.name][-2000:]
