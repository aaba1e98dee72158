"""Staff marks stay bound to what they marked, and every output of a batch gives the same total.

Reuses the three-student course of manual_course (ada: the solution, bob: the release, cy: a hostile answer),
graded in this process; each test works on its own copy of the graded batch and regrades at most one
changed notebook."""

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from grader.assignments.registry import SEQUENCE_MODELS
from grader.assignments.sequence_models.samples import WRONG as SEQUENCE_MODELS_WRONG
from grader.batch import outputs
from grader.batch.progress import batch_progress
from grader.batch.record import read_record
from grader.batch.run import BatchConfig, run_batch
from grader.batch.summary import print_batch_summary
from grader.cli import main
from tests.batch.manual_course import (  # noqa: F401 (fixtures)
    LIMITS,
    QUESTION,
    SEQ2COL_CHECK,
    WINDOWS,
    _batch,
    _fill,
    _grade,
    _rows,
    _with_cell,
    course,
    graded,
    out,
    threads,
)

NEW_ANSWER = "On second thought: the weights are only determined up to the kernel of the design matrix."


def _export(out) -> dict:
    assert main(["manual", "export", str(out)]) == 0
    with open(out / "manual" / f"{QUESTION}.csv", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def _resubmit(course, tmp_path, student, grade_id, source) -> Path:
    """The course's submissions with ``student``'s notebook changed in one cell."""
    subs = tmp_path / "subs"
    shutil.copytree(course, subs, dirs_exist_ok=True)
    _with_cell(course / f"{student}.ipynb", grade_id, source, subs / f"{student}.ipynb")
    return subs


def _score(out, tmp_path, scores: dict, name="scores.csv"):
    scores_csv = _fill(out / "manual" / f"{QUESTION}.csv", scores, tmp_path / name)
    assert main(["manual", "import", str(out), str(scores_csv), "--by", "ta1"]) == 0


def test_a_changed_answer_sets_its_manual_score_aside(out, course, threads, tmp_path, capsys):
    _export(out)
    _score(out, tmp_path, {"ada": ("2", "clear and complete"), "cy": ("1.5", "no bias term named")})
    assert _rows(out)["ada"]["pending"] == "0"
    report = _batch(_resubmit(course, tmp_path, "ada", QUESTION, NEW_ANSWER), out, threads)
    assert report.graded == 1 and report.reused == 2

    exported = _export(out)
    ada, cy = exported["ada"], exported["cy"]
    assert ada["answer"] == NEW_ANSWER and ada["points"] == "" and ada["comment"] == ""
    assert ada["note"] == "answer changed since scored (it had 2/2 by ta1: clear and complete)"
    assert (cy["points"], cy["comment"], cy["note"]) == ("1.5", "no bias term named", "")  # cy's answer is the same
    page = (out / "manual" / f"{QUESTION}.html").read_text()
    assert "answer changed since scored (it had 2/2 by ta1: clear and complete)" in page
    rows = _rows(out)
    assert rows["ada"]["pending"] == "2" and rows["ada"][QUESTION] == "0" and float(rows["ada"]["total"]) == 25
    assert (
        "manual stale: ar_fit_interpretation (the answer changed since it was scored 2/2 by ta1"
        in rows["ada"]["reason"]
    )
    assert "manual pending: ar_fit_interpretation" in rows["ada"]["reason"] and "stale" not in rows["cy"]["reason"]
    assert any(n.startswith("ada manual stale: ar_fit_interpretation") for n in report.notes)
    assert _grade(out, "ada", QUESTION)[1:3] == (None, True)  # formgrader shows it to be graded again
    staff = json.loads((out / "staff.json").read_text())
    assert staff["version"] == 3
    kept = [m for m in staff["marks"] if m["student"] == "ada"]
    assert len(kept) == 1 and kept[0]["points"] == 2 and len(kept[0]["answer_sha256"]) == 64  # kept, set aside

    # taking the gradebook's scores back does not revive the old score
    assert main(["manual", "import", str(out), "--from-gradebook"]) == 0
    assert _rows(out)["ada"]["pending"] == "2"
    # scored again from the new export: bound to the new answer
    _score(out, tmp_path, {"ada": ("1", "the kernel, yes; but why?")}, "again.csv")
    rows = _rows(out)
    assert rows["ada"]["pending"] == "0" and rows["ada"][QUESTION] == "1" and "stale" not in rows["ada"]["reason"]
    assert _export(out)["ada"]["note"] == ""


def test_scores_typed_into_an_export_older_than_the_answer_are_set_aside(out, course, threads, tmp_path):
    _export(out)
    old_export = shutil.copy(out / "manual" / f"{QUESTION}.csv", tmp_path / "old-export.csv")
    _batch(_resubmit(course, tmp_path, "ada", QUESTION, NEW_ANSWER), out, threads)
    scores = _fill(
        Path(old_export), {"ada": ("2", "scored on what the export showed"), "cy": ("1", "")}, tmp_path / "scores.csv"
    )
    assert main(["manual", "import", str(out), str(scores)]) == 0
    rows = _rows(out)
    assert rows["ada"]["pending"] == "2" and "manual stale" in rows["ada"]["reason"]
    assert rows["cy"]["pending"] == "0" and rows["cy"][QUESTION] == "1"
    assert _export(out)["ada"]["note"].startswith("answer changed since scored (it had 2/2")


def _windows(out, student) -> dict:
    data = json.loads((out / "results" / f"{student}.json").read_text())
    return next(c for e in data["exercises"] if e["id"] == "seq2col" for c in e["checks"] if c["name"] == WINDOWS)


def test_an_override_is_set_aside_when_the_code_it_was_made_on_changes(out, course, threads, tmp_path, capsys):
    """The issue's case: a windows check overridden from 0 to 1; the student fixes the bug and resubmits. The
    override no longer holds the fixed notebook down: it is kept and listed, the grader's points count until
    staff confirm it. A change to a written answer alone leaves it standing."""
    full = next(c.points for c in SEQUENCE_MODELS.exercise("seq2col").checks if c.name == WINDOWS)
    wrong = _resubmit(course, tmp_path / "wrong", "cy", "seq2col", SEQUENCE_MODELS_WRONG["seq2col"])
    assert _batch(wrong, out, threads).graded == 1
    assert _windows(out, "cy")["points"] == 0
    assert main(["override", str(out), "cy", f"seq2col.{WINDOWS}", "1", "--reason", "the handout was ambiguous"]) == 0
    assert _windows(out, "cy")["staff"]["points"] == 1
    # cy edits only the written answer: the same code, so the override stands and nothing is said
    answered = _resubmit(wrong, tmp_path / "answered", "cy", QUESTION, NEW_ANSWER)
    report = _batch(answered, out, threads)
    assert (
        report.graded == 1
        and _windows(out, "cy")["staff"]["points"] == 1
        and not [n for n in report.notes if "override" in n]
    )
    # cy fixes seq2col: the override was made on other code
    fixed = _resubmit(course, tmp_path / "fixed", "cy", QUESTION, NEW_ANSWER)  # the solution's seq2col again
    report = _batch(fixed, out, threads)
    assert report.graded == 1
    windows = _windows(out, "cy")
    assert windows["points"] == full and "staff" not in windows  # the grader's points stand
    said = [n for n in report.notes if n.startswith(f"cy override stale: seq2col.{WINDOWS}")]
    assert len(said) == 1 and "set to 1/" in said[0] and "--confirm" in said[0], report.notes
    assert said[0].removeprefix("cy ") in _rows(out)["cy"]["reason"] and "overridden" not in _rows(out)["cy"]["reason"]
    kept = [m for m in json.loads((out / "staff.json").read_text())["marks"] if m["student"] == "cy"]
    assert len(kept) == 1 and kept[0]["points"] == 1 and len(kept[0]["code_sha256"]) == 64  # kept, set aside
    capsys.readouterr()
    assert main(["override", str(out), "--list"]) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("cy\t")]
    assert len(listed) == 1 and "\tno: override stale" in listed[0] and "--confirm" in listed[0]
    # staff confirm it on the new code: it applies again, bound to that code
    assert main(["override", str(out), "cy", f"seq2col.{WINDOWS}", "--confirm", "--by", "ta2"]) == 0
    windows = _windows(out, "cy")
    assert (
        windows["staff"]
        == {
            "kind": "override",
            "points": 1.0,
            "reason": "the handout was ambiguous",
            "by": "ta2",
            "grader_points": full,
        }
        and windows["points"] == 1
    )
    assert "override stale" not in _rows(out)["cy"]["reason"]
    assert main(["override", str(out), "ada", f"seq2col.{WINDOWS}", "--confirm"]) == 2  # there is none to confirm


def test_a_version_1_staff_file_is_read_and_bound_to_what_is_there(out, course, threads, tmp_path):
    """Marks written before marks knew what they marked: applied as before, then bound to the answer and
    result at hand, so a later change of either is caught."""
    v1 = {
        "version": 1,
        "assignment": "sequence_models",
        "marks": [
            {
                "student": "ada",
                "exercise": QUESTION,
                "check": "manual_review",
                "kind": "manual",
                "points": 1.5,
                "reason": "fine",
                "by": "ta0",
                "grader_points": 0.0,
            },
            {
                "student": "cy",
                "exercise": "seq2col",
                "check": WINDOWS,
                "kind": "override",
                "points": 0.5,
                "reason": "agreed",
                "by": "ta0",
                "grader_points": 1.5,
            },
        ],
    }
    (out / "staff.json").write_text(json.dumps(v1))
    assert main(["export-grades", str(out), "--lms", "canvas"]) == 0
    rows = _rows(out)
    assert (
        rows["ada"][QUESTION] == "1.5" and rows["ada"]["pending"] == "0" and "graded again" not in rows["cy"]["reason"]
    )
    staff = json.loads((out / "staff.json").read_text())
    assert staff["version"] == 3 and all(("answer_sha256" in m) == (m["kind"] == "manual") for m in staff["marks"])
    assert all(len(m["code_sha256"]) == 64 and m["result_key"] for m in staff["marks"] if m["kind"] == "override")
    _batch(_resubmit(course, tmp_path, "ada", QUESTION, NEW_ANSWER), out, threads)
    assert "manual stale" in _rows(out)["ada"]["reason"] and _rows(out)["ada"]["pending"] == "2"


def _numbers(text: str, pattern: str) -> dict:
    return {m.group(1): float(m.group(2)) for m in re.finditer(pattern, text, re.MULTILINE)}


@pytest.fixture
def marked(out, course, threads, tmp_path):
    """The batch with manual scores (ada 2, cy 1.5) and overrides (ada's and cy's seq2col), regraded after
    cy changed seq2col only (a fresh result, the same answer; cy's override is set aside, made on other code):
    (OUTDIR, the regrade's progress lines, its table)."""
    _export(out)
    _score(out, tmp_path, {"ada": ("2", "clear"), "cy": ("1.5", "no bias term named")})
    assert main(["override", str(out), "ada", f"seq2col.{SEQ2COL_CHECK.name}", "0", "--reason", "copied"]) == 0
    assert main(["override", str(out), "cy", f"seq2col.{WINDOWS}", "0.5", "--reason", "agreed"]) == 0
    lines, table = io.StringIO(), io.StringIO()
    with batch_progress(Console(file=lines, width=200), 3) as progress:
        subs = _resubmit(course, tmp_path, "cy", "seq2col", SEQUENCE_MODELS_WRONG["seq2col"])
        report = run_batch(
            BatchConfig(
                str(subs),
                "sequence_models",
                str(out),
                limits=LIMITS,
                backend="inprocess",
                gradescope=True,
                lms="canvas",
            ),
            executor=threads,
            progress=progress,
        )
    assert report.graded == 1
    print_batch_summary(Console(file=table, width=200), report, out)
    return out, lines.getvalue(), table.getvalue()


def test_grades_csv_lms_file_pages_gradebook_and_table_give_one_total(marked):
    out, _, table = marked
    totals = {s: float(r["total"]) for s, r in _rows(out).items()}
    assert (
        totals["ada"] == SEQUENCE_MODELS.max_score - SEQ2COL_CHECK.points
    )  # the solution, a check overridden to 0, 2 manual
    assert _numbers(table, r"^\W*(\w+)\W+([\d.]+)/27\b") == totals
    with open(out / "canvas-grades.csv", newline="") as f:
        assert {r["ID"]: float(r["sequence_models"]) for r in csv.DictReader(f)} == totals
    for student, total in totals.items():
        result, _ = outputs.read_result(out, student)
        assert result.score == total
        page = (out / "feedback" / f"{student}.html").read_text()
        assert f"graded: {total:g} of " in page
        assert json.loads((out / "gradescope" / student / "results.json").read_text())["score"] == total
        assert _grade(out, student, QUESTION)[3] == pytest.approx(total)
    ada = (out / "feedback" / "ada.html").read_text()  # staff points said apart from the grader's
    assert "graded: 26.5 of 27 points (24.5 automatic, 2 by staff)" in ada and "auto-graded" not in ada
    summary = (out / "summary.html").read_text()
    assert f"mean {sum(totals.values()) / 3:.2f} of 27" in summary
    assert set(read_record(out).students) == set(totals)


def test_progress_lines_give_the_final_total(marked):
    out, lines, table = marked
    totals = {s: float(r["total"]) for s, r in _rows(out).items()}
    assert _numbers(lines, r"^\[\d/3\] (\w+): ([\d.]+)/27") == totals


def test_an_answer_left_as_released_is_unanswered_not_pending(graded):
    """bob handed back the release: his answer cell still says what it was released with. Nothing waits for staff."""
    rows = _rows(graded)
    assert (rows["bob"]["pending"], rows["bob"][QUESTION]) == ("0", "0") and rows["ada"]["pending"] == "2"
    assert (
        "unanswered: ar_fit_interpretation" in rows["bob"]["reason"] and "manual pending" not in rows["bob"]["reason"]
    )
    check = next(
        c
        for e in json.loads((graded / "results" / "bob.json").read_text())["exercises"]
        if e["id"] == QUESTION
        for c in e["checks"]
    )
    assert (check["status"], check["kind"], check["points"]) == ("missing", "unanswered", 0)
    page = (graded / "feedback" / "bob.html").read_text()
    row = page[page.index(f'id="{QUESTION}"') :].split("</section>")[0]
    assert 'class="unanswered badge">unanswered<' in row and "is empty or still reads as it was released" in row
    assert "Waiting for course staff" not in row and "pending" not in row
    assert _grade(graded, "bob", QUESTION)[1:3] == (None, False)  # formgrader is not asked to grade it


def test_results_json_gives_a_staff_scored_check_the_staffs_points(marked):
    """The issue's `"points": 0.0` next to `"staff": {"points": 2.0}`: the JSON now says what the page says, and
    keeps the grader's own points apart (and reads them back as the grader's)."""
    out, _, _ = marked
    for student, count in (("ada", 2), ("cy", 1)):  # cy's override was made on code cy changed since: set aside
        data = json.loads((out / "results" / f"{student}.json").read_text())
        marked_checks = [c for e in data["exercises"] for c in e["checks"] if "staff" in c]
        assert len(marked_checks) == count and all(c["points"] == c["staff"]["points"] for c in marked_checks)
        assert all(e["score"] == pytest.approx(sum(c["points"] for c in e["checks"])) for e in data["exercises"])
        stored, _ = outputs.read_result(out, student)
        assert [c.points for e in stored.exercises for c in e.checks if c.staff] == [
            c["staff"]["grader_points"] for c in marked_checks
        ]
    unmarked = json.loads((out / "results" / "bob.json").read_text())
    assert all("staff" not in c for e in unmarked["exercises"] for c in e["checks"])


def test_an_override_on_the_same_code_says_when_the_grader_now_gives_other_points():
    """Another seqgrade version or other limits may change the grader's points for the same code: the override
    still applies, and the TA is told."""
    from grader.batch.record import StudentRecord
    from grader.batch.staff import StoredMark, Target
    from grader.batch.totals import final_result
    from grader.results import CheckResult, ExerciseResult, NotebookResult, StaffMark

    result = NotebookResult(
        "sequence_models",
        "a.ipynb",
        "graded",
        (ExerciseResult("seq2col", (CheckResult(WINDOWS, "failed", 0, 1.5),), 1.5),),
        max_score=1.5,
    )
    mark = StoredMark(StaffMark("override", 1.0, "agreed", grader_points=1.5), result_key="old", code_sha256="c0de")
    done = final_result(
        "a", result, StudentRecord("a.ipynb", code_sha256="c0de"), {Target("a", "seq2col", WINDOWS): mark}, "new"
    )
    assert done.result.score == 1.0 and done.notes == (
        f"seq2col.{WINDOWS}: the grader now gives 0 points (it gave 1.5 when the override was set); "
        "the override of 1 is kept",
    )
    other = final_result(
        "a", result, StudentRecord("a.ipynb", code_sha256="beef"), {Target("a", "seq2col", WINDOWS): mark}, "new"
    )
    assert other.result.score == 0 and other.notes[0].startswith(f"override stale: seq2col.{WINDOWS} (set to 1/1.5")
