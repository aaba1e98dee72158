"""The late policy in a batch: the submission times read from each export, a batch regraded under another
policy, an extension refused with its line, progress lines, and Gradescope submissions without a notebook.

The end-to-end tests grade a three-student Canvas or Gradescope export in this process (the course of
manual_course) and regrade it from the cache under another policy."""

import csv
import datetime as dt
import json
import os
import zipfile

import pytest

from grader.batch.inputs import discover
from grader.batch.late import ARCHIVE_TIME, read_extensions
from grader.batch.publish import republish
from grader.batch.record import StudentRecord, read_record
from grader.batch.run import BatchConfig, run_batch
from grader.cli import main
from grader.errors import UsageError
from tests.batch.manual_course import LIMITS, WINDOWS, course, threads  # noqa: F401 (fixtures)

from .late_policies import PER_DAY, WINDOWED, _policy

# ---- times read from each export -------------------------------------------------------------------


def test_each_export_gives_its_submission_times(released, tmp_path):
    _, solution = released
    canvas = tmp_path / "canvas.zip"
    with zipfile.ZipFile(canvas, "w") as zf:
        zf.writestr(
            zipfile.ZipInfo("hopper_LATE_1001_5001_sequence_models.ipynb", (2025, 10, 22, 9, 30, 0)),
            solution.read_bytes(),
        )
    job = discover(canvas, "sequence_models").jobs[0]
    assert (job.submitted, job.submitted_from, job.late) == ("2025-10-22T09:30:00", ARCHIVE_TIME, True)

    gradescope = tmp_path / "gs.zip"
    with zipfile.ZipFile(gradescope, "w") as zf:
        zf.write(solution, "submission_7/sequence_models.ipynb")
        zf.writestr(
            "submission_metadata.yml",
            "submission_7:\n  :created_at: 2025-10-21 08:00:05.123456000 -07:00\n"
            "  :submitters:\n  - :name: Ada\n    :sid: '42'\n    :email: ada@uni.edu\n",
        )
    job = discover(gradescope, "sequence_models").jobs[0]
    assert job.student == "42" and job.submitted_from == "Gradescope created_at"
    assert dt.datetime.fromisoformat(job.submitted) == dt.datetime(
        2025, 10, 21, 15, 0, 5, 123456, tzinfo=dt.timezone.utc
    )

    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "ada.ipynb").write_bytes(solution.read_bytes())
    os.utime(folder / "ada.ipynb", (1761000000, 1761000000))
    assert (
        discover(folder, "sequence_models").jobs[0].submitted == ""
    )  # copying files changes their times: only when asked
    job = discover(folder, "sequence_models", file_times=True).jobs[0]
    assert (job.submitted, job.submitted_from) == ("2025-10-20T22:40:00+00:00", "file time")


# ---- a batch whose policy changes ----------------------------------------------------------------


def _canvas(course, path):
    """ada on time, cy 34 hours late (Canvas: LATE), bob five days late; file times in UTC."""
    names = {
        "ada": ("ada_1001_5001", (2025, 10, 20, 20, 0, 0)),
        "cy": ("cy_LATE_1003_5003", (2025, 10, 22, 8, 0, 0)),
        "bob": ("bob_LATE_1002_5002", (2025, 10, 25, 21, 0, 0)),
    }
    with zipfile.ZipFile(path, "w") as zf:
        for student, (prefix, when) in names.items():
            zf.writestr(
                zipfile.ZipInfo(f"{prefix}_sequence_models.ipynb", when), (course / f"{student}.ipynb").read_bytes()
            )
    return path


def _snapshot(out) -> dict:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.suffix in (".csv", ".json", ".html") and p.name != "batch.json"
    }


def test_a_regrade_under_another_policy_changes_only_the_late_rows(course, threads, tmp_path):
    export = _canvas(course, tmp_path / "canvas.zip")
    first, second = tmp_path / "per_day.json", tmp_path / "windows.json"
    first.write_text(json.dumps({**PER_DAY, "archive_timezone": "UTC"}))
    second.write_text(json.dumps({**WINDOWED, "archive_timezone": "UTC"}))
    out = tmp_path / "out"

    def batch(policy):
        return run_batch(
            BatchConfig(
                str(export),
                "sequence_models",
                str(out),
                limits=LIMITS,
                backend="inprocess",
                lms="canvas",
                gradescope=True,
                late_policy=str(policy),
            ),
            executor=threads,
        )

    assert batch(first).graded == 3
    assert main(["override", str(out), "cy", f"seq2col.{WINDOWS}", "0.5", "--reason", "agreed"]) == 0
    rows = {r["student_id"]: r for r in csv.DictReader(open(out / "grades.csv", newline=""))}
    assert (rows["1001"]["late"], rows["1003"]["late"], rows["1002"]["late"]) == ("", "yes", "yes")
    points = json.loads((out / "results" / "1003.json").read_text())["score"]  # the grader's, with the override
    assert points == 25 - 1 and float(rows["1003"]["total"]) == pytest.approx(0.8 * points)  # 80% of it all
    assert (
        "late by 1 day 10 hours (submitted 2025-10-22 10:00 +0200, Canvas file time; due 2025-10-20 23:59 +0200): "
        "80% credit" in rows["1003"]["reason"]
    )
    assert "the LMS marked the submission late" not in rows["1003"]["reason"]  # the policy decided
    page = (out / "feedback" / "1003.html").read_text()
    assert "late: 80% credit, 19.2 points count" in page and "Late: late by 1 day 10 hours" in page
    assert json.loads((out / "gradescope" / "1003" / "results.json").read_text())["score"] == pytest.approx(19.2)
    before = _snapshot(out)

    report = batch(second)
    assert report.reused == 3 and report.graded == 0
    after = _snapshot(out)
    changed = {name for name in before if before[name] != after.get(name)}
    assert changed == {
        "grades.csv",
        "canvas-grades.csv",
        "summary.html",
        "feedback/1002.html",
        "feedback/1003.html",
        "gradescope/1002/results.json",
        "gradescope/1003/results.json",
    }
    # in the tables, the late rows alone (bob's total is 0 under both policies: only its reason changes)
    for name, column, rows_changed in (("grades.csv", 0, {"1002", "1003"}), ("canvas-grades.csv", 1, {"1003"})):
        old_rows = {r[column]: r for r in csv.reader(before[name].decode().splitlines())}
        new_rows = {r[column]: r for r in csv.reader(after[name].decode().splitlines())}
        assert {s for s in old_rows if old_rows[s] != new_rows[s]} == rows_changed, name
    rows = {r["student_id"]: r for r in csv.DictReader(open(out / "grades.csv", newline=""))}
    assert float(rows["1003"]["total"]) == pytest.approx(0.5 * points) and float(rows["1002"]["total"]) == 0
    assert rows["1003"]["reason"].count("% credit") == 1 and ": 50% credit" in rows["1003"]["reason"]
    assert ": 0% credit" in rows["1002"]["reason"]
    assert read_record(out).late_policy["penalty"]["then"] == 0
    from nbgrader.api import Gradebook  # nbgrader's own late penalty: `nbgrader export` subtracts it

    with Gradebook(read_record(out).gradebook_url(out)) as gb:
        penalty = {s: gb.find_submission("sequence_models", s).late_submission_penalty for s in ("1001", "1003")}
    assert penalty == {"1001": 0, "1003": pytest.approx(0.5 * points)}


# ---- issue 37 (continued) ---------------------------------------------------------------------------------


def test_an_extension_dated_before_the_due_date_is_refused_with_its_line(course, tmp_path, capsys):
    table = tmp_path / "ext.csv"
    table.write_text("student,due,reason\n\nada,2025-10-02,flu (a typo for 2025-10-20)\n")
    with pytest.raises(UsageError) as refused:  # before: taken, and an on-time student got 50%
        read_extensions(table, _policy(PER_DAY), {"ada": StudentRecord("a")})
    assert (
        type(refused.value).__name__ == "ExtensionRefused"
        and refused.value.line_number == 3
        and refused.value.line == "ada,2025-10-02,flu (a typo for 2025-10-20)"
    )
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(PER_DAY))
    assert (
        main(
            [
                "batch",
                str(course),
                "--assignment",
                "sequence_models",
                "--out",
                str(tmp_path / "out"),
                "--late-policy",
                str(policy),
                "--extensions",
                str(table),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "ext.csv, line 3 ('ada,2025-10-02,flu (a typo for 2025-10-20)')" in err
    assert "ends 2025-10-02 23:59 +0200, before the assignment is due (2025-10-20 23:59 +0200)" in err


def test_progress_lines_of_reused_results_give_the_late_total(course, threads, tmp_path):
    """The issue's `[11/24] 1015: 27/27` while grades.csv says 21.6: a reused result's line now has the late charge."""
    import io
    import re

    from rich.console import Console

    from grader.batch.progress import batch_progress

    export, policy, out = _canvas(course, tmp_path / "canvas.zip"), tmp_path / "policy.json", tmp_path / "out"
    policy.write_text(json.dumps({**PER_DAY, "archive_timezone": "UTC"}))
    lines = {}
    for run in ("fresh", "reused"):
        text = io.StringIO()
        with batch_progress(Console(file=text, width=200), 3) as progress:
            run_batch(
                BatchConfig(
                    str(export),
                    "sequence_models",
                    str(out),
                    limits=LIMITS,
                    backend="inprocess",
                    late_policy=str(policy),
                ),
                executor=threads,
                progress=progress,
            )
        lines[run] = {
            m.group(1): float(m.group(2)) for m in re.finditer(r"^\[\d/3\] (\d+): ([\d.]+)/27", text.getvalue(), re.M)
        }
    totals = {r["student_id"]: float(r["total"]) for r in csv.DictReader(open(out / "grades.csv", newline=""))}
    assert totals["1003"] < 25  # 80% of cy's points
    assert lines["fresh"] == totals and lines["reused"] == totals


def test_a_gradescope_submission_listed_without_files_gets_a_row(course, threads, tmp_path):
    """Gradescope: a submission the metadata lists but the export holds no file of (the student submitted
    nothing, or the files were left out) still gives each of its submitters a row: 0 points and why, in
    grades.csv and the Gradescope CSV, and again when the outputs are rewritten from OUTDIR."""
    export = tmp_path / "gs.zip"
    with zipfile.ZipFile(export, "w") as zf:
        zf.write(course / "ada.ipynb", "submission_1/sequence_models.ipynb")
        zf.writestr(
            "submission_metadata.yml",
            (
                "submission_1:\n  :submitters:\n  - :name: Ada\n    :sid: '42'\n"
                "submission_3:\n  :created_at: 2025-10-20 10:00:00.000000000 -07:00\n  :submitters:\n"
                "  - :name: Grace\n    :sid: '44'\n    :email: grace@uni.edu\n"
            ),
        )
    out = tmp_path / "out"
    run_batch(
        BatchConfig(str(export), "sequence_models", str(out), limits=LIMITS, backend="inprocess", lms="gradescope"),
        executor=threads,
    )
    for rewritten in (False, True):
        if rewritten:
            republish(out)
        rows = {r["student_id"]: r for r in csv.DictReader(open(out / "grades.csv", newline=""))}
        assert set(rows) == {"42", "44"}
        assert (rows["44"]["status"], float(rows["44"]["total"]), rows["44"]["email"]) == (
            "invalid",
            0,
            "grace@uni.edu",
        )
        assert "no notebook handed in: the submission has no files" in rows["44"]["reason"]
        with open(out / "gradescope-grades.csv", newline="") as f:
            assert {r["SID"]: float(r["sequence_models"]) for r in csv.DictReader(f)}["44"] == 0


def test_a_gradescope_pdf_gets_a_row_and_an_unreadable_time_is_said(course, threads, tmp_path):
    """Gradescope: a student who uploaded only report.pdf has a row (0 points, why) in grades.csv and the
    Gradescope CSV; a notebook whose :created_at cannot be read is not taken as on time: its row and the
    batch's notes say so."""
    export = tmp_path / "gs.zip"
    with zipfile.ZipFile(export, "w") as zf:
        zf.write(course / "ada.ipynb", "submission_1/sequence_models.ipynb")
        zf.writestr("submission_2/report.pdf", b"%PDF-1.4 my notebook, printed")
        zf.writestr(
            "submission_metadata.yml",
            (
                "submission_1:\n  :created_at: 2025-10-23 10:00:00 PDT\n"
                "  :submitters:\n  - :name: Ada\n    :sid: '42'\n"
                "submission_2:\n  :created_at: 2025-10-20 10:00:00.000000000 -07:00\n  :submitters:\n"
                "  - :name: Alan\n    :sid: '43'\n    :email: alan@uni.edu\n"
            ),
        )
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(PER_DAY))
    report = run_batch(
        BatchConfig(
            str(export),
            "sequence_models",
            str(tmp_path / "out"),
            limits=LIMITS,
            backend="inprocess",
            lms="gradescope",
            late_policy=str(policy),
        ),
        executor=threads,
    )
    rows = {r["student_id"]: r for r in csv.DictReader(open(tmp_path / "out" / "grades.csv", newline=""))}
    assert set(rows) == {"42", "43"}
    assert (rows["43"]["status"], float(rows["43"]["total"]), rows["43"]["email"]) == ("invalid", 0, "alan@uni.edu")
    assert "no notebook handed in: report.pdf is not a notebook" in rows["43"]["reason"]
    with open(tmp_path / "out" / "gradescope-grades.csv", newline="") as f:
        assert {r["SID"]: (r["Email"], float(r["sequence_models"])) for r in csv.DictReader(f)}["43"] == (
            "alan@uni.edu",
            0,
        )
    said = "submission time unreadable: '2025-10-23 10:00:00 PDT' (Gradescope created_at)"
    assert said in rows["42"]["reason"] and any(n.startswith(f"42 {said}") for n in report.notes)
