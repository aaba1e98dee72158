"""Staff commands a TA can rely on: students named as the export names them, override --list that is safe
to open and says which marks count, and no pending manual points on rows that have no answer.

Reuses the graded three-student course of manual_course (ada, bob, cy); the LMS's names and emails are
written into a private copy's batch record."""

import csv
import io
import json
import shutil
from dataclasses import replace

import pytest

from grader.batch.record import read_record, write_record
from grader.cli import main
from grader.notebook import grade_id
from tests.batch.manual_course import QUESTION, WINDOWS, _batch, _fill, _rows, course, graded, out, threads  # noqa: F401 (fixtures)

PEOPLE = {"ada": ("Ada Lovelace", "ada@uni.edu"), "bob": ("hopper", "grace@uni.edu"), "cy": ("hopper", "=cy@uni.edu")}


@pytest.fixture
def named(out):
    """The batch as an LMS export names its students: two share the name 'hopper'."""
    record = read_record(out)
    write_record(
        out,
        replace(
            record,
            students={s: replace(who, name=PEOPLE[s][0], email=PEOPLE[s][1]) for s, who in record.students.items()},
        ),
    )
    return out


def test_override_by_name_or_email_and_ambiguity_lists_the_candidates(named, capsys):
    check = f"seq2col.{WINDOWS}"
    assert main(["override", str(named), "Ada@uni.edu", check, "0.5", "--reason", "agreed"]) == 0
    assert capsys.readouterr().out.startswith(f"ada {check}: 0.5 points (the grader gives 1.5)")
    assert "overridden: seq2col.check_seq2col_windows 0.5 instead of 1.5" in _rows(named)["ada"]["reason"]
    assert main(["override", str(named), "hopper", check, "1", "--reason", "x"]) == 2
    err = capsys.readouterr().err
    assert (
        "'hopper' names 2 students: 'bob' (hopper, grace@uni.edu), 'cy' (hopper, =cy@uni.edu); give the student id"
        in err
    )
    assert main(["override", str(named), "nobody", check, "1", "--reason", "x"]) == 2
    assert "unknown student 'nobody': no id, name or email of this batch" in capsys.readouterr().err
    assert main(["override", str(named), "  ADA LOVELACE ", check, "--remove"]) == 0
    assert "removed the override of seq2col.check_seq2col_windows for ada" in capsys.readouterr().out


def test_manual_import_by_email_and_an_ambiguous_name_is_a_row_error(named, tmp_path, capsys):
    scores = tmp_path / "scores.csv"
    scores.write_text(f"student,question,points,comment\ngrace@uni.edu,{QUESTION},1,short\n")
    assert main(["manual", "import", str(named), str(scores)]) == 0
    assert _rows(named)["bob"][QUESTION] == "1"
    scores.write_text(f"student,question,points,comment\nHopper,{QUESTION},2,\n")
    assert main(["manual", "import", str(named), str(scores)]) == 2
    assert "row 2, column 'student': 'Hopper' names 2 students: 'bob'" in capsys.readouterr().err
    # an email that starts like a formula, as the export quotes it
    scores.write_text(f"student,question,points,comment\n'=cy@uni.edu,{QUESTION},2,\n")
    assert main(["manual", "import", str(named), str(scores)]) == 0
    assert _rows(named)["cy"][QUESTION] == "2"


def test_override_list_is_neutralised_and_says_which_marks_count(out, course, threads, tmp_path, capsys):
    assert (
        main(
            [
                "override",
                str(out),
                "cy",
                f"seq2col.{WINDOWS}",
                "0.5",
                "--reason",
                '=HYPERLINK("http://x")\tnow',
                "--by",
                "@ta",
            ]
        )
        == 0
    )
    assert main(["manual", "export", str(out)]) == 0
    scores = _fill(out / "manual" / f"{QUESTION}.csv", {"ada": ("2", "fine"), "cy": ("1", "-ok")}, tmp_path / "s.csv")
    assert main(["manual", "import", str(out), str(scores)]) == 0
    subs = tmp_path / "subs"  # ada rewrites her answer: her score is set aside
    shutil.copytree(course, subs)
    nb = json.loads((subs / "ada.ipynb").read_text())
    cell = next(c for c in nb["cells"] if grade_id(c) == QUESTION)
    cell["source"] = "A new answer."
    (subs / "ada.ipynb").write_text(json.dumps(nb))
    _batch(subs, out, threads)
    capsys.readouterr()

    assert main(["override", str(out), "--list", "--all"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out), delimiter="\t"))
    assert rows[0] == ["student", "check", "kind", "points", "grader_points_when_set", "by", "counts", "reason"]
    listed = {(r[0], r[2]): r for r in rows[1:]}
    assert listed[("ada", "manual")][6] == "no: set aside, the answer changed since it was scored"
    assert listed[("cy", "manual")][6] == "yes" and listed[("cy", "manual")][7] == "'-ok"
    override = listed[("cy", "override")]
    assert override[5] == "'@ta" and override[7] == '\'=HYPERLINK("http://x") now' and override[6] == "yes"
    assert not [c for r in rows for c in r if c.startswith(("=", "+", "-", "@", "\t", "\r"))]


def test_rows_without_an_answer_carry_no_manual_pending(out, course, threads, tmp_path):
    subs = tmp_path / "subs"
    shutil.copytree(course, subs)
    (subs / "dan.ipynb").write_text('{"cells": [')  # broken JSON: nothing to grade by hand either
    report = _batch(subs, out, threads)
    rows = _rows(out)
    assert rows["dan"]["status"] == "invalid" and rows["dan"]["pending"] == "0"
    assert "manual pending" not in rows["dan"]["reason"] and rows["ada"]["pending"] == "2"
    assert not [n for n in report.notes if n.startswith("dan")]
    page = (out / "feedback" / "dan.html").read_text()
    assert "auto-graded: 0 of 27 points</div>" in page and "Waiting for course staff" not in page
    from tests.batch.manual_course import _grade

    assert _grade(out, "dan", QUESTION)[2] is False  # formgrader does not ask for it
