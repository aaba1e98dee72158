"""The TA workflow around a batch: manual answers exported and scored, overrides, regrades that keep
both, the gradebook and formgrader, release-identical and late flags, LMS import files.

Notebooks are graded in this process (backend "inprocess": they are the course's own solution and
release, no student code), three per batch, so the module costs a few batches' time."""

import csv
import json
import shutil

import nbformat
import pytest

from grader.assignments.registry import SEQUENCE_MODELS
from grader.assignments.sequence_models.samples import WRONG as SEQUENCE_MODELS_WRONG
from grader.batch.facts import read_facts
from grader.cli import main
from tests.batch.manual_course import (  # noqa: F401 (fixtures)
    HOSTILE_ANSWER,
    QUESTION,
    SEQ2COL_CHECK,
    WINDOWS,
    _batch,
    _check,
    _fill,
    _grade,
    _result,
    _rows,
    _with_cell,
    course,
    graded,
    out,
    threads,
)


def test_grades_csv_says_what_is_pending_and_which_notebook_is_the_release(graded):
    rows = _rows(graded)
    assert [k for k in rows["ada"]][:4] == ["student_id", "total", "max_score", "pending"]
    assert {s: r["pending"] for s, r in rows.items()} == {
        "ada": "2",
        "bob": "0",
        "cy": "2",
    }  # bob's answer: as released
    assert "manual pending: ar_fit_interpretation (2 points)" in rows["ada"]["reason"]
    assert "unmodified release detected" in rows["bob"]["reason"] and float(rows["bob"]["total"]) == 0
    assert "unmodified release" not in rows["ada"]["reason"] + rows["cy"]["reason"]
    assert _result(graded, "bob")["flags"] == ["release_identical"] and _result(graded, "ada")["flags"] == []


def test_release_identical_fires_on_the_release_only(released, tmp_path):
    student, solution = released
    assert read_facts(str(student), SEQUENCE_MODELS).release_identical
    assert not read_facts(str(solution), SEQUENCE_MODELS).release_identical
    # one stub filled in, or one code cell added, is a student's own work
    one = _with_cell(student, "seq2col", SEQUENCE_MODELS_WRONG["seq2col"], tmp_path / "one.ipynb")
    assert not read_facts(str(one), SEQUENCE_MODELS).release_identical
    nb = nbformat.read(student, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("def seq2col(seq, k):\n    return seq, seq"))
    nbformat.write(nb, tmp_path / "added.ipynb")
    assert not read_facts(str(tmp_path / "added.ipynb"), SEQUENCE_MODELS).release_identical
    # metadata stripped and outputs added: still the release
    nb = nbformat.read(student, as_version=4)
    for cell in nb.cells:
        cell.metadata = {}
    nbformat.write(nb, tmp_path / "stripped.ipynb")
    assert read_facts(str(tmp_path / "stripped.ipynb"), SEQUENCE_MODELS).release_identical


def test_export_writes_one_safe_page_and_one_csv_per_question(out, capsys):
    from grader.batch.manual import AS_RELEASED

    assert main(["manual", "export", str(out)]) == 0
    page = (out / "manual" / f"{QUESTION}.html").read_text()
    assert "<script" not in page.lower() and "&lt;script&gt;alert(" in page and "&lt;b&gt;" in page
    assert "<strong>more</strong>" in page  # markdown is rendered, raw HTML is not
    assert "<img" not in page and "&lt;img src=x onerror" in page and 'href="javascript' not in page
    assert 'src="http://tracker.example' not in page  # an image is never fetched (at most a link to click)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "bob" in page and "YOUR ANSWER HERE" in page  # every student, even the unchanged release
    with open(out / "manual" / f"{QUESTION}.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["student", "notebook", "question", "answer", "max_points", "points", "comment", "note"]
    assert [r["student"] for r in rows] == ["ada", "bob", "cy"]
    assert rows[2]["answer"] == HOSTILE_ANSWER and rows[0]["notebook"] == "ada.ipynb"
    assert {r["max_points"] for r in rows} == {"2"} and {r["points"] + r["comment"] for r in rows} == {""}
    assert [r["note"] for r in rows] == ["", AS_RELEASED, ""]


def test_round_trip_scores_and_overrides_survive_a_regrade(out, course, threads, tmp_path, capsys):
    assert main(["manual", "export", str(out)]) == 0
    scores = _fill(
        out / "manual" / f"{QUESTION}.csv",
        {"ada": ("2", "clear and complete"), "cy": ("1.5", "no bias term named")},
        tmp_path / "scores.csv",
    )
    assert main(["manual", "import", str(out), str(scores), "--by", "ta1"]) == 0
    assert "2 stored" in capsys.readouterr().out
    assert (
        main(["override", str(out), "ada", f"seq2col.{SEQ2COL_CHECK.name}", "0", "--reason", "copied from a classmate"])
        == 0
    )
    assert main(["override", str(out), "cy", f"seq2col.{WINDOWS}", "0.5", "--reason", "late penalty agreed"]) == 0

    def assert_kept(out):
        rows = _rows(out)
        assert float(rows["ada"]["total"]) == 25 - SEQ2COL_CHECK.points + 2 and rows["ada"]["pending"] == "0"
        assert rows["ada"][QUESTION] == "2" and rows["cy"][QUESTION] == "1.5" and rows["bob"]["pending"] == "0"
        assert "overridden: seq2col." in rows["ada"]["reason"] and "copied from a classmate" in rows["ada"]["reason"]
        assert (
            "manual pending" not in rows["ada"]["reason"] + rows["bob"]["reason"]
            and "unanswered" in rows["bob"]["reason"]
        )
        data = _result(out, "ada")
        manual = _check(data, QUESTION, "manual_review")
        assert manual["staff"] == {
            "kind": "manual",
            "points": 2.0,
            "reason": "clear and complete",
            "by": "ta1",
            "grader_points": 0.0,
        }
        assert _check(data, "seq2col", SEQ2COL_CHECK.name)["staff"]["kind"] == "override"
        assert data["score"] == float(rows["ada"]["total"]) and data["pending_points"] == 0
        page = (out / "feedback" / "ada.html").read_text()
        assert "clear and complete" in page and "copied from a classmate" in page
        assert _grade(out, "ada", QUESTION)[1:3] == (2.0, False)
        auto, manual_score, _, total = _grade(out, "ada", "test_seq2col")
        assert auto == SEQUENCE_MODELS.exercise("seq2col").points and manual_score == float(rows["ada"]["seq2col"])
        assert total == pytest.approx(float(rows["ada"]["total"]))
        assert _grade(out, "bob", QUESTION)[1:3] == (None, False)  # unanswered: nothing for formgrader to ask
        gs = json.loads((out / "gradescope" / "ada" / "results.json").read_text())
        tests = {t["name"]: t for t in gs["tests"]}
        assert gs["score"] == float(rows["ada"]["total"])
        written = tests[f"{QUESTION}: written answer"]
        assert written["score"] == 2 and written["max_score"] == 2 and "clear and complete" in written["output"]
        overridden = tests[
            f"seq2col: {SEQ2COL_CHECK.property}"
        ]  # named by the property, as Gradescope's autograder does
        assert (
            overridden["score"] == 0 and "Points set by course staff: copied from a classmate" in overridden["output"]
        )
        cy = {t["name"]: t for t in json.loads((out / "gradescope" / "cy" / "results.json").read_text())["tests"]}
        assert cy[f"{QUESTION}: written answer"]["score"] == 1.5
        bob = {t["name"]: t for t in json.loads((out / "gradescope" / "bob" / "results.json").read_text())["tests"]}
        unanswered = bob[f"{QUESTION}: written answer"]  # named as every written answer is, not by the check's id
        assert (unanswered["score"], unanswered["status"]) == (0, "failed") and "unanswered" in unanswered["output"]

    assert_kept(out)
    # cy changes seq2col (now wrong, so the grader's own points under cy's override change): regraded
    _with_cell(course / "cy.ipynb", "seq2col", SEQUENCE_MODELS_WRONG["seq2col"], tmp_path / "cy.ipynb")
    subs = tmp_path / "subs"
    shutil.copytree(course, subs)
    shutil.copy(tmp_path / "cy.ipynb", subs / "cy.ipynb")
    report = _batch(subs, out, threads, gradescope=True)
    assert report.graded == 1 and report.reused == 2
    assert_kept(out)
    # cy's override was made on other code: set aside (tests/batch/test_staff_marks.py), confirmed here
    stale = [n for n in report.notes if n.startswith(f"cy override stale: seq2col.{WINDOWS}")]
    assert len(stale) == 1 and stale[0].removeprefix("cy ") in _rows(out)["cy"]["reason"]  # said in grades.csv too
    assert "staff" not in _check(_result(out, "cy"), "seq2col", WINDOWS)
    assert main(["override", str(out), "cy", f"seq2col.{WINDOWS}", "--confirm"]) == 0
    assert _check(_result(out, "cy"), "seq2col", WINDOWS)["staff"] == {
        "kind": "override",
        "points": 0.5,
        "reason": "late penalty agreed",
        "by": "",
        "grader_points": 0.0,
    }
    # listed, then removed: the grader's points count again
    capsys.readouterr()
    assert main(["override", str(out), "--list"]) == 0
    listed = capsys.readouterr().out
    assert "ada\tseq2col." in listed and "copied from a classmate" in listed and "ar_fit_interpretation" not in listed
    assert main(["override", str(out), "ada", f"seq2col.{SEQ2COL_CHECK.name}", "--remove"]) == 0
    assert float(_rows(out)["ada"]["total"]) == 27
    assert _grade(out, "ada", "test_seq2col")[1] is None


@pytest.mark.parametrize(
    "rows, row, column, words",
    [
        ([("ada", QUESTION, "2"), ("zed", QUESTION, "1")], 3, "student", "unknown student 'zed'"),
        ([("ada", QUESTION, "2"), ("cy", "seq2col", "1")], 3, "question", "unknown question 'seq2col'"),
        ([("ada", QUESTION, "2.5")], 2, "points", "outside [0, 2]"),
        ([("ada", QUESTION, "-1")], 2, "points", "outside [0, 2]"),
        ([("cy", QUESTION, "1"), ("ada", QUESTION, "two")], 3, "points", "'two' is not a number"),
        ([("ada", QUESTION, "nan")], 2, "points", "outside"),
        ([("ada", QUESTION, "1"), ("ada", QUESTION, "2")], 3, "student", "already scored in row 2"),
    ],
)
def test_a_bad_row_is_named_and_nothing_is_applied(out, tmp_path, capsys, rows, row, column, words):
    before = {p: (out / p).read_bytes() for p in ("grades.csv", "results/ada.json", "results/cy.json", "gradebook.db")}
    path = tmp_path / "scores.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "question", "points", "comment"])
        writer.writerows([(*r, "") for r in rows])
    capsys.readouterr()
    assert main(["manual", "import", str(out), str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"row {row}, column '{column}'" in err and words in err and len(err.splitlines()) == 1, err
    assert not (out / "staff.json").exists()
    assert {p: (out / p).read_bytes() for p in before} == before


def test_import_errors_for_missing_columns_and_missing_batches(out, tmp_path, capsys):
    path = tmp_path / "scores.csv"
    path.write_text("student,question\nada,ar_fit_interpretation\n")
    assert main(["manual", "import", str(out), str(path)]) == 2
    assert "column 'points': missing column" in capsys.readouterr().err
    assert main(["manual", "export", str(tmp_path / "nothing")]) == 2
    assert "holds no graded batch" in capsys.readouterr().err
    for argv, words in [
        (["override", str(out), "ada", "seq2col", "1", "--reason", "x"], "seq2col has"),  # several checks: name one
        (["override", str(out), "ada", f"seq2col.{SEQ2COL_CHECK.name}", "1"], "needs a reason"),
        (["override", str(out), "zed", QUESTION, "1", "--reason", "x"], "unknown student 'zed'"),
        (
            ["override", str(out), "ada", f"seq2col.{SEQ2COL_CHECK.name}", "99", "--reason", "x"],
            "points must be within",
        ),
        (["override", str(out), "ada", "nope", "1", "--reason", "x"], "has no exercise 'nope'"),
        (["override", str(out), "ada", QUESTION, "--remove"], "no override"),
        # a written answer is scored by manual import: an override would replace (and --remove delete) that score
        (["override", str(out), "ada", QUESTION, "2", "--reason", "regrade request"], "is a written answer: score it"),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1, err
    assert not (out / "staff.json").exists()


def test_scores_typed_into_formgrader_are_imported(out, capsys):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        gb.find_grade(QUESTION, "sequence_models", "sequence_models", "bob").manual_score = 0.5
        gb.db.commit()
    assert main(["manual", "import", str(out), "--from-gradebook"]) == 0
    staff = _check(_result(out, "bob"), QUESTION, "manual_review")["staff"]
    assert staff["points"] == 0.5 and staff["by"] == "formgrader"
    assert _rows(out)["bob"]["pending"] == "0" and _grade(out, "bob", QUESTION)[1:3] == (0.5, False)
    # a score outside the question's points is refused, nothing applied
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        gb.find_grade(QUESTION, "sequence_models", "sequence_models", "ada").manual_score = 3
        gb.db.commit()
    staff_before = (out / "staff.json").read_bytes()
    assert main(["manual", "import", str(out), "--from-gradebook"]) == 2
    assert "ada ar_fit_interpretation has 3, outside [0, 2]" in capsys.readouterr().err
    assert (out / "staff.json").read_bytes() == staff_before


def test_lms_import_files(out, capsys):
    assert main(["export-grades", str(out), "--lms", "canvas"]) == 0
    with open(out / "canvas-grades.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "sequence_models"]
    assert [r[1] for r in rows[1:]] == ["ada", "bob", "cy"] and rows[1][5] == _rows(out)["ada"]["total"]
    assert "have manual points pending" in capsys.readouterr().out
    assert main(["export-grades", str(out), "--lms", "gradescope"]) == 0
    with open(out / "gradescope-grades.csv", newline="") as f:
        assert next(csv.reader(f)) == ["Name", "SID", "Email", "sequence_models"]


def test_answers_a_spreadsheet_would_run_are_quoted():
    from grader.batch.manual import answers_csv
    from grader.batch.record import BatchRecord, StudentRecord

    record = BatchRecord(
        "sequence_models",
        "folder",
        "",
        students={
            "ada": StudentRecord("ada.ipynb", answers={QUESTION: '=HYPERLINK("http://x", "click")'}),
            "bob": StudentRecord("bob.ipynb", answers={QUESTION: "x = 1 is fine"}),
        },
    )
    rows = list(csv.DictReader(answers_csv(QUESTION, 2.0, record, {}).splitlines()))
    assert [r["answer"] for r in rows] == ['\'=HYPERLINK("http://x", "click")', "x = 1 is fine"]


@pytest.mark.parametrize(
    "args, expected",
    [
        (["manual", "export", "OUT"], "holds no graded batch"),
        (["manual", "import", "OUT"], "needs score CSV files or --from-gradebook"),
        (["override", "OUT", "--list"], "holds no graded batch"),
        (["override", "OUT", "ada", "seq2col", "1"], "needs a reason"),
        (["export-grades", "OUT", "--lms", "canvas"], "holds no graded batch"),
    ],
)
def test_staff_command_usage_errors_come_before_torch(args, expected, tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; from grader.cli import main; rc = main(sys.argv[1:]); "
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH'); sys.exit(rc)"
    )
    argv = [a.replace("OUT", str(tmp_path / "none")) for a in args]
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and expected in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert "NO-TORCH" in proc.stdout


def test_two_staff_edits_at_once_both_survive(out, monkeypatch):
    """The second edit waits for the first (the staff lock) instead of saving over it."""
    import threading

    from grader.batch import overrides, staff

    loaded, go, errors = threading.Event(), threading.Event(), []
    real_load = staff.load_marks

    def load_then_pause(outdir):  # the first edit stops between reading the marks and saving them
        marks = real_load(outdir)
        if threading.current_thread().name == "first":
            loaded.set()
            go.wait(60)
        return marks

    def edit(student):
        try:
            overrides.set_override(out, student, f"seq2col.{WINDOWS}", 0.0, f"set for {student}", by="ta")
        except Exception as exc:  # a thread's exception would otherwise vanish
            errors.append(exc)

    monkeypatch.setattr(staff, "load_marks", load_then_pause)
    first = threading.Thread(target=edit, args=("ada",), name="first")
    first.start()
    assert loaded.wait(60)
    second = threading.Thread(target=edit, args=("bob",), name="second")
    second.start()
    second.join(2.0)  # with the lock it is still waiting; without it, it saves its mark now
    go.set()
    first.join(60)
    second.join(60)
    assert errors == []
    assert {t.student for t in real_load(out)} == {"ada", "bob"}


def test_a_staff_lock_that_cannot_be_opened_is_a_typed_error(tmp_path):
    from grader.batch.staff import staff_lock
    from grader.errors import OutputNotWritable

    (tmp_path / ".staff.lock").mkdir()  # something in the way that not even root can open for appending
    with pytest.raises(OutputNotWritable, match="cannot write to .*staff.lock"):
        with staff_lock(tmp_path):
            pass
