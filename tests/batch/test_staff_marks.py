"""Staff marks stay bound to what they marked, and every output of a batch gives the same total.

Reuses the three-student course of test_manual (ada: the solution, bob: the release, cy: a hostile answer),
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
from tests.batch.test_manual import (  # noqa: F401 (fixtures)
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
    assert "manual stale: ar_fit_interpretation (the answer changed since it was scored 2/2 by ta1" in rows["ada"]["reason"]
    assert "manual pending: ar_fit_interpretation" in rows["ada"]["reason"] and "stale" not in rows["cy"]["reason"]
    assert any(n.startswith("ada manual stale: ar_fit_interpretation") for n in report.notes)
    assert _grade(out, "ada", QUESTION)[1:3] == (None, True)  # formgrader shows it to be graded again
    staff = json.loads((out / "staff.json").read_text())
    assert staff["version"] == 2
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
    scores = _fill(Path(old_export), {"ada": ("2", "scored on what the export showed"), "cy": ("1", "")}, tmp_path / "scores.csv")
    assert main(["manual", "import", str(out), str(scores)]) == 0
    rows = _rows(out)
    assert rows["ada"]["pending"] == "2" and "manual stale" in rows["ada"]["reason"]
    assert rows["cy"]["pending"] == "0" and rows["cy"][QUESTION] == "1"
    assert _export(out)["ada"]["note"].startswith("answer changed since scored (it had 2/2")


def test_an_override_on_a_notebook_graded_again_is_flagged(out, course, threads, tmp_path):
    check = f"seq2col.{SEQ2COL_CHECK.name}"
    assert main(["override", str(out), "ada", check, "0", "--reason", "copied from a classmate"]) == 0
    assert "graded again" not in _rows(out)["ada"]["reason"]
    rerun = _batch(course, out, threads)  # nothing changed: nothing to say
    assert rerun.reused == 3 and not [n for n in rerun.notes if "graded again" in n]
    # ada edits only her free-text answer: the grader's points for the check stay, the notebook is another
    report = _batch(_resubmit(course, tmp_path, "ada", QUESTION, NEW_ANSWER), out, threads)
    said = [n for n in report.notes if n.startswith(f"ada {check}:")]
    assert len(said) == 1 and "the notebook was graded again since the override was set" in said[0], report.notes
    assert "the override of 0 is kept" in said[0] and "now gives" not in said[0]
    rows = _rows(out)
    assert said[0].removeprefix("ada ") in rows["ada"]["reason"]
    # set again on this notebook: no longer flagged
    assert main(["override", str(out), "ada", check, "0", "--reason", "copied from a classmate"]) == 0
    assert "graded again" not in _rows(out)["ada"]["reason"]


def test_a_version_1_staff_file_is_read_and_bound_to_what_is_there(out, course, threads, tmp_path):
    """Marks written before marks knew what they marked: applied as before, then bound to the answer and
    result at hand, so a later change of either is caught."""
    v1 = {"version": 1, "assignment": "sequence_models", "marks": [
        {"student": "ada", "exercise": QUESTION, "check": "manual_review", "kind": "manual", "points": 1.5,
         "reason": "fine", "by": "ta0", "grader_points": 0.0},
        {"student": "cy", "exercise": "seq2col", "check": WINDOWS, "kind": "override", "points": 0.5,
         "reason": "agreed", "by": "ta0", "grader_points": 1.5}]}
    (out / "staff.json").write_text(json.dumps(v1))
    assert main(["export-grades", str(out), "--lms", "canvas"]) == 0
    rows = _rows(out)
    assert rows["ada"][QUESTION] == "1.5" and rows["ada"]["pending"] == "0" and "graded again" not in rows["cy"]["reason"]
    staff = json.loads((out / "staff.json").read_text())
    assert staff["version"] == 2 and all(("answer_sha256" in m) != ("result_key" in m) for m in staff["marks"])
    _batch(_resubmit(course, tmp_path, "ada", QUESTION, NEW_ANSWER), out, threads)
    assert "manual stale" in _rows(out)["ada"]["reason"] and _rows(out)["ada"]["pending"] == "2"


def _numbers(text: str, pattern: str) -> dict:
    return {m.group(1): float(m.group(2)) for m in re.finditer(pattern, text, re.MULTILINE)}


@pytest.fixture
def marked(out, course, threads, tmp_path):
    """The batch with manual scores (ada 2, cy 1.5) and overrides (ada's and cy's seq2col), regraded after
    cy changed seq2col only (a fresh result, the same answer): (OUTDIR, the regrade's progress lines, its table)."""
    _export(out)
    _score(out, tmp_path, {"ada": ("2", "clear"), "cy": ("1.5", "no bias term named")})
    assert main(["override", str(out), "ada", f"seq2col.{SEQ2COL_CHECK.name}", "0", "--reason", "copied"]) == 0
    assert main(["override", str(out), "cy", f"seq2col.{WINDOWS}", "0.5", "--reason", "agreed"]) == 0
    lines, table = io.StringIO(), io.StringIO()
    with batch_progress(Console(file=lines, width=200), 3) as progress:
        subs = _resubmit(course, tmp_path, "cy", "seq2col", SEQUENCE_MODELS_WRONG["seq2col"])
        report = run_batch(BatchConfig(str(subs), "sequence_models", str(out), limits=LIMITS, backend="inprocess",
                                       gradescope=True, lms="canvas"), executor=threads, progress=progress)
    assert report.graded == 1
    print_batch_summary(Console(file=table, width=200), report, out)
    return out, lines.getvalue(), table.getvalue()


def test_grades_csv_lms_file_pages_gradebook_and_table_give_one_total(marked):
    out, _, table = marked
    totals = {s: float(r["total"]) for s, r in _rows(out).items()}
    assert totals["ada"] == SEQUENCE_MODELS.max_score - SEQ2COL_CHECK.points  # the solution, a check overridden to 0, 2 manual
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
