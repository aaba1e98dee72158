"""nbgrader's checksums: every released cell carries the checksum of the text it is released with, and
`nbgrader autograde` (with the course's nbgrader_config.py) warns about a locked cell only when the
student edited it: never for an untouched release or solution, once per edited cell, and the edited
hidden-test cell is still graded with the hidden tests."""

import re
import shutil

import nbformat
import pytest
from nbgrader import utils

from grader.assignments.registry import ASSIGNMENTS
from grader.course.release import release
from grader.notebook import checksum
from grader.notebook import grade_id as _grade_id

from .nbgrader_course import generated

WARNING = re.compile(r"Attribute '(\w+)' for cell (\S+) has changed")


def test_every_checksum_is_that_of_the_text_students_are_given(tmp_path):
    """The student version's cells carry the checksums of their own text; the solution version's carry the
    same ones (so `nbgrader validate` finds its filled-in answers answered)."""
    for assignment in ASSIGNMENTS:
        notebook = ASSIGNMENTS[assignment].notebook
        student = nbformat.read(release(assignment, tmp_path / "student") / notebook, as_version=4)
        solution = nbformat.read(release(assignment, tmp_path / "solution", solutions=True) / notebook, as_version=4)
        given = {_grade_id(c): checksum(c) for c in student.cells if checksum(c)}
        assert given
        wrong = [
            gid for c in student.cells if (gid := _grade_id(c)) in given and given[gid] != utils.compute_checksum(c)
        ]
        assert not wrong, (assignment, wrong)
        kept = {_grade_id(c): checksum(c) or None for c in solution.cells if _grade_id(c) in given}
        assert kept == given, assignment


@pytest.mark.slow
def test_autograde_warns_only_about_the_locked_cells_a_student_edited(tmp_path):
    assignment, notebook = "rnn_lm", ASSIGNMENTS["rnn_lm"].notebook
    course, made = generated(assignment, tmp_path / "course")
    assert not WARNING.search(made.stdout + made.stderr)
    released = course.root / "release" / assignment
    ours = release(assignment, tmp_path / "ours")
    assert (ours / notebook).read_bytes() == (released / notebook).read_bytes()  # seqgrade's release is nbgrader's
    solution = release(assignment, tmp_path / "solution", solutions=True) / notebook
    edited = nbformat.read(solution, as_version=4)
    for cell in edited.cells:
        if _grade_id(cell) == "imports":
            cell.source += "\nimport os  # added by the student"
        elif _grade_id(cell) == "test_lstm_cell":
            cell.source = "# I typed here by mistake"
    for student, write in (
        ("untouched", lambda p: shutil.copy(released / notebook, p)),
        ("solution", lambda p: shutil.copy(solution, p)),
        ("edited", lambda p: nbformat.write(edited, p)),
    ):
        folder = course.root / "submitted" / student / assignment
        folder.mkdir(parents=True)
        write(folder / notebook)
        for helper in ("selfcheck.py", "selfcheck_base.py"):
            shutil.copy(released / helper, folder)
    graded = course.nbgrader("autograde", assignment)
    log = graded.stdout + graded.stderr
    assert sorted(WARNING.findall(log)) == [("checksum", "imports"), ("checksum", "test_lstm_cell")], log[-3000:]
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gb:
        scores = {
            s: {g.name: g.auto_score for g in gb.find_submission_notebook(notebook[:-6], assignment, s).grades}
            for s in ("untouched", "solution", "edited")
        }
    full = {f"test_{e.id}": e.points for e in ASSIGNMENTS[assignment].exercises if e.kind != "manual"}
    for student in ("solution", "edited"):  # the edited test cell is graded by the hidden tests all the same
        assert {k: v for k, v in scores[student].items() if k in full} == full, student
    assert all(scores["untouched"][k] == 0 for k in full)
