"""Bonus exercises: their points are earned on top of the assignment's maximum and never count in it, in every
place a total is shown (the result and its JSON, the feedback page, the terminal, grades.csv, Gradescope's
results.json, nbgrader's gradebook and hidden-test cell, `seqgrade list`, the notebook's cells); and an exercise
that this machine cannot judge (triton missing) is "not judged" without a call into the student's code."""

import csv
import io
import json

import nbformat
import pytest
from rich.console import Console

from grader.checking.base import CheckFailed, call
from grader.checking.exercise import Assignment, Check, Exercise
from grader.judge import judge_exercise
from grader.results import NotebookResult
from grader.sandbox.inprocess import InProcess


def check_double_values(student):
    """double(x) returns 2 x.

    Always judged."""
    if call(student, "double", 3).value != 6:
        raise CheckFailed("double(3) should be 6")


def check_triple_values(student):
    """triple(x) returns 3 x.

    Always judged."""
    if call(student, "triple", 3).value != 9:
        raise CheckFailed("triple(3) should be 9")


TINY = Assignment(
    id="tiny",
    notebook="tiny.ipynb",
    exercises=(
        Exercise("double", "function", (Check(check_double_values, 2.0),)),
        Exercise("triple", "function", (Check(check_triple_values, 1.5),), bonus=True),
    ),
)
BOTH = "def double(x):\n    return 2 * x\n\ndef triple(x):\n    return 3 * x\n"


def _graded(source: str = BOTH) -> NotebookResult:
    student, _ = InProcess.from_cells([(0, source)])
    exercises = TINY.described([judge_exercise(e, student, others=["double", "triple"]) for e in TINY.exercises])
    return NotebookResult("tiny", "tiny.ipynb", "graded", exercises=exercises, max_score=TINY.max_score)


def test_bonus_points_come_on_top_of_the_maximum():
    assert (TINY.max_score, TINY.bonus_points) == (2.0, 1.5)
    assert [e.max_points for e in TINY.exercises] == [2.0, 0.0]
    result = _graded()
    assert (result.points, result.score, result.max_score, result.bonus_points) == (3.5, 3.5, 2.0, 1.5)
    data = json.loads(result.to_json())
    assert data["score"] == 3.5 and data["max_score"] == 2.0 and data["bonus_points"] == 1.5
    assert [e.get("bonus", False) for e in data["exercises"]] == [False, True]
    back = NotebookResult.from_dict(data)
    assert back == result and back.to_json() == result.to_json()
    undone = _graded("def double(x):\n    return 2 * x\n")  # the bonus left undone costs nothing
    assert (undone.score, undone.max_score, undone.bonus_points) == (2.0, 2.0, 0.0)


def test_a_result_without_a_bonus_is_written_as_before():
    result = _graded()
    plain = NotebookResult("tiny", "tiny.ipynb", "graded", exercises=result.exercises[:1], max_score=2.0)
    text = plain.to_json()
    assert '"bonus' not in text


def test_an_exercise_this_machine_cannot_judge_is_not_judged_and_its_code_never_runs():
    exercise = Exercise(
        "triple",
        "function",
        (Check(check_triple_values, 1.5),),
        bonus=True,
        unjudgeable=lambda: "triton is not installed on the grading machine",
    )
    student, _ = InProcess.from_cells([(0, "def triple(x):\n    raise SystemExit('called')\n")])
    result = judge_exercise(exercise, student)
    assert result.bonus and result.score == 0
    assert [(c.status, c.kind, c.points) for c in result.checks] == [("failed", "not_judged", 0.0)]
    assert result.checks[0].message == "not judged: triton is not installed on the grading machine"


def test_the_page_and_the_terminal_show_the_bonus_apart():
    from grader.report.html import render, total_line
    from grader.report.terminal import print_summary

    result = _graded()
    assert total_line(result) == "auto-graded: 2 of 2 points, and 1.5 points from bonus exercises (3.5 in all)"
    page = render(result)
    assert "(bonus: 1.5 points, on top of the maximum)" in page and "(2 points)" in page
    out = io.StringIO()
    print_summary(result, Console(file=out, width=200))
    assert "triple (bonus)" in out.getvalue() and "double (bonus)" not in out.getvalue()


def test_gradescope_gets_the_bonus_as_extra_credit():
    from grader.gradescope.results_json import results_from_notebook

    data = results_from_notebook(_graded(), visibility="visible")
    assert data["score"] == 3.5
    tests = {t["name"]: (t["score"], t["max_score"]) for t in data["tests"]}
    assert tests == {"double: double(x) returns 2 x.": (2.0, 2.0), "triple (bonus): triple(x) returns 3 x.": (1.5, 0)}
    assert "1.5 of them are bonus points, on top of the 2 points of a full score" in data["output"]


def test_grades_csv_counts_the_bonus_in_the_total_only(tmp_path):
    from grader.batch.outputs import write_grades_csv

    write_grades_csv(tmp_path, TINY, {"s1": _graded()})
    rows = list(csv.DictReader((tmp_path / "grades.csv").open()))
    assert [(r["total"], r["max_score"], r["double"], r["triple (bonus)"]) for r in rows] == [("3.5", "2", "2", "1.5")]


def test_nbgrader_gets_the_bonus_as_extra_credit_and_its_cell_is_worth_nothing(tmp_path, monkeypatch):
    from grader import nbgrader_hook
    from grader.batch.outputs import write_gradebook

    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    write_gradebook(db, TINY, {"s1": _graded()})
    from nbgrader.api import Gradebook

    with Gradebook(db) as gb:
        grades = {
            g.name: (g.max_score, g.auto_score, g.extra_credit, g.score)
            for g in gb.find_submission_notebook("tiny", "tiny", "s1").grades
        }
        assert grades == {"test_double": (2.0, 2.0, None, 2.0), "test_triple": (0.0, 0.0, 1.5, 1.5)}
        assert gb.find_submission("tiny", "s1").score == 3.5 and gb.find_assignment("tiny").max_score == 2.0
    # The hidden-test cell: a score above a cell's points would fail the whole submission in nbgrader.
    monkeypatch.setattr(nbgrader_hook, "get_assignment", lambda name: TINY)
    ns: dict = {}
    exec(BOTH, ns)
    assert nbgrader_hook.score("double", ns, "tiny") == 2.0 and nbgrader_hook.score("triple", ns, "tiny") == 0.0


def test_list_marks_the_bonus(monkeypatch, capsys):
    from grader.assignments import registry
    from grader.cli import main

    monkeypatch.setattr(registry, "ASSIGNMENTS", {"tiny": TINY})
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "tiny (tiny.ipynb): 2 points + 1.5 bonus" in out and "triple (bonus)" in out


@pytest.fixture
def tiny_course(tmp_path, monkeypatch):
    """A source folder holding tiny's notebook: an introduction, a section and double's cells."""
    from grader.assignments import registry

    monkeypatch.setattr(registry, "get_assignment", lambda name: TINY)
    v4 = nbformat.v4
    meta = {
        "grade": True,
        "grade_id": "test_double",
        "locked": True,
        "points": 2.0,
        "schema_version": 3,
        "solution": False,
    }
    nb = v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# Tiny\n\nThe assignment is worth 2 points.", id="intro"),
            v4.new_markdown_cell("## 1. Double (2 points)", id="md-double"),
            v4.new_code_cell(
                "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
                id="double",
                metadata={
                    "nbgrader": {
                        **meta,
                        "grade": False,
                        "grade_id": "double",
                        "locked": False,
                        "solution": True,
                        "points": None,
                    }
                },
            ),
            v4.new_code_cell("# Autograded test for double (2 points).", id="test-double", metadata={"nbgrader": meta}),
        ]
    )
    del nb.cells[2].metadata["nbgrader"]["points"]
    folder = tmp_path / "source" / "tiny"
    folder.mkdir(parents=True)
    (folder / "selfcheck.py").write_text("def check_triple(f):\n    pass\n")
    nbformat.write(nb, folder / "tiny.ipynb")
    return tmp_path, folder / "tiny.ipynb"


def test_the_notebook_gives_a_bonus_cell_no_nbgrader_points_and_says_it_is_a_bonus(tiny_course):
    from grader.course.scaffold import add_exercise_cells, sync_points

    root, path = tiny_course
    add_exercise_cells("tiny", "triple", root=root)
    cells = {c.id: c for c in nbformat.read(path, as_version=4).cells}
    test = cells["test-triple"]
    assert test.metadata.nbgrader["points"] == 0.0  # nbgrader's maximum leaves the bonus out
    assert test.source.startswith("# Autograded test for triple (bonus: 1.5 points).")
    assert "The assignment is worth 2 points." in cells["intro"].source  # the total leaves it out too
    assert sync_points("tiny", root=root, write=False).changed == []
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.id == "test-triple":  # an author who wrote the cell by hand, as a regular exercise
            cell.metadata.nbgrader["points"] = 1.5
            cell.source = cell.source.replace("(bonus: 1.5 points)", "(2 points)")
    nbformat.write(nb, path)
    report = sync_points("tiny", root=root)
    assert "test_triple: 1.5 -> 0 points" in report.changed
    assert (
        nbformat.read(path, as_version=4)
        .cells[-1]
        .source.startswith("# Autograded test for triple (bonus: 1.5 points).")
    )
