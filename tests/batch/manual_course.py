"""The graded three-student course the TA-workflow tests share (tests/batch/test_manual.py and the modules that
reuse its batch): ada, the solution; bob, the release handed back unchanged; cy, the solution with a hostile
answer. Graded in this process (backend "inprocess"), with the helpers that read and fill a batch's outputs.

A test module brings the fixtures in by importing them."""

import concurrent.futures as cf
import csv
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from grader.assignments.registry import SEQUENCE_MODELS
from grader.batch.run import BatchConfig, run_batch
from grader.jail.limits import Limits
from grader.notebook import grade_id

LIMITS = Limits(call_timeout_s=3, cell_cpu_s=2, cell_timeout_s=5, submission_timeout_s=60)
QUESTION = "ar_fit_interpretation"
HOSTILE_ANSWER = (
    "<script>alert('x')</script> the weights are <b>[0, 1, 1, 0]</b> & **more**\n\n"
    "<img src=x onerror=alert(1)> [link](javascript:alert(1)) ![pixel](http://tracker.example/p.png)"
)
SEQ2COL_CHECK = SEQUENCE_MODELS.exercise("seq2col").checks[0]
WINDOWS = "check_seq2col_windows"  # the wrong seq2col of grader.course.samples fails it


@pytest.fixture(scope="module")
def threads():
    with cf.ThreadPoolExecutor(1) as pool:
        yield pool


def _with_cell(solution: Path, gid: str, source: str, dest: Path) -> Path:
    nb = nbformat.read(solution, as_version=4)
    for cell in nb.cells:
        if grade_id(cell) == gid:
            cell.source = source
    nbformat.write(nb, dest)
    return dest


@pytest.fixture(scope="module")
def course(released, tmp_path_factory):
    """ada: the solution; bob: the release handed back unchanged; cy: the solution with a hostile answer."""
    student, solution = released
    root = tmp_path_factory.mktemp("course")
    subs = root / "submissions"
    subs.mkdir()
    shutil.copy(solution, subs / "ada.ipynb")
    shutil.copy(student, subs / "bob.ipynb")
    _with_cell(solution, QUESTION, HOSTILE_ANSWER, subs / "cy.ipynb")
    return subs


def _batch(subs, out, threads, **kw):
    return run_batch(
        BatchConfig(str(subs), "sequence_models", str(out), limits=LIMITS, backend="inprocess", **kw), executor=threads
    )


@pytest.fixture(scope="module")
def graded(course, threads, tmp_path_factory):
    out = tmp_path_factory.mktemp("graded") / "out"
    report = _batch(course, out, threads, gradescope=True)
    assert report.graded == 3
    return out


@pytest.fixture
def out(graded, tmp_path):
    """A private copy of the graded batch (OUTDIR can be moved: its gradebook path is relative to it)."""
    copy = tmp_path / "out"
    shutil.copytree(graded, copy)
    return copy


def _rows(out):
    with open(Path(out) / "grades.csv", newline="") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def _result(out, student):
    return json.loads((Path(out) / "results" / f"{student}.json").read_text())


def _check(data, exercise, check):
    return next(c for e in data["exercises"] if e["id"] == exercise for c in e["checks"] if c["name"] == check)


def _grade(out, student, cell):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{Path(out) / 'gradebook.db'}") as gb:
        grade = gb.find_grade(cell, "sequence_models", "sequence_models", student)
        nb = gb.find_submission_notebook("sequence_models", "sequence_models", student)
        return grade.auto_score, grade.manual_score, grade.needs_manual_grade, nb.score


def _fill(csv_path: Path, scores: dict, dest: Path) -> Path:
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if row["student"] in scores:
            row["points"], row["comment"] = scores[row["student"]]
    with open(dest, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return dest
