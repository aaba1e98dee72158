"""Batch grading: input layouts, duplicates and junk, resume after kill -9, determinism, Dask, gradebook."""

import concurrent.futures as cf
import csv
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from grader.batch.inputs import discover
from grader.batch.run import BatchConfig, run_batch
from grader.cli import main
from grader.course.samples import make_samples
from grader.errors import UsageError
from grader.jail.limits import Limits

LIMITS = Limits(call_timeout_s=3, cell_cpu_s=2, cell_timeout_s=5, submission_timeout_s=60)


@pytest.fixture(scope="module")
def samples(released, tmp_path_factory):
    """Six sample notebooks: correct, partly wrong, hostile, invalid, correct, partly wrong."""
    return make_samples(released[1], tmp_path_factory.mktemp("samples"), count=6)


@pytest.fixture(scope="module")
def threads():
    # One thread: the test process keeps one grader (one zygote) for every batch in this module.
    with cf.ThreadPoolExecutor(1) as pool:
        yield pool


def _batch(submissions, out, executor, **kw):
    return run_batch(BatchConfig(str(submissions), "sequence_models", str(out), limits=LIMITS, **kw), executor=executor)


def _rows(out):
    with open(Path(out) / "grades.csv") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def test_flat_folder(samples, tmp_path, threads):
    report = _batch(samples[0].parent, tmp_path / "out", threads)
    rows = _rows(tmp_path / "out")
    assert report.layout == "folder" and set(rows) == {f"student0{i}" for i in range(1, 7)}
    assert float(rows["student01"]["total"]) == 25 and rows["student04"]["status"] == "invalid"
    assert float(rows["student03"]["total"]) < 25  # hostile
    for student in rows:
        assert (tmp_path / "out" / "results" / f"{student}.json").is_file()
        assert (tmp_path / "out" / "feedback" / f"{student}.html").is_file()
    summary = (tmp_path / "out" / "summary.html").read_text()
    assert "Item analysis" in summary and "histogram of total scores" in summary and "<rect" in summary


def test_nbgrader_tree(samples, tmp_path, threads):
    for i, path in enumerate(samples[:2]):
        folder = tmp_path / "course" / "submitted" / f"s{i}" / "sequence_models"
        folder.mkdir(parents=True)
        (folder / "sequence_models.ipynb").write_bytes(path.read_bytes())
    report = _batch(tmp_path / "course", tmp_path / "out", threads)
    assert report.layout == "nbgrader" and set(_rows(tmp_path / "out")) == {"s0", "s1"}


def test_canvas_zip_with_junk_duplicate_and_invalid(samples, tmp_path, threads):
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(samples[0], "lovelace_1001_5001_sequence_models.ipynb")
        zf.write(samples[1], "lovelace_LATE_1001_5002_sequence_models-1.ipynb")  # newer: wins
        zf.write(samples[3], "turing_1002_5003_sequence_models.ipynb")  # invalid notebook
        zf.writestr("hopper_1003_5004_notes.pdf", b"%PDF-1.4 not a notebook")
    report = _batch(archive, tmp_path / "out", threads)
    rows = _rows(tmp_path / "out")
    assert report.layout == "canvas" and set(rows) == {"1001", "1002", "1003"}
    assert rows["1001"]["total"] == _rows_single(samples[1], tmp_path, threads)
    assert rows["1001"]["late"] == "yes" and rows["1001"]["name"] == "lovelace" and rows["1002"]["late"] == ""
    assert rows["1002"]["status"] == "invalid" and "not valid JSON" in rows["1002"]["reason"]
    # a student who handed in only a PDF gets a row that says so (Canvas names the student in the file name)
    assert rows["1003"]["status"] == "invalid" and float(rows["1003"]["total"]) == 0
    assert "no notebook handed in: notes.pdf is not a notebook" in rows["1003"]["reason"]
    reasons = dict(report.skipped)
    assert "not a notebook" in reasons["hopper_1003_5004_notes.pdf"]
    assert "duplicate for student 1001" in reasons["lovelace_1001_5001_sequence_models.ipynb"]


def _rows_single(path, tmp_path, threads):
    folder = tmp_path / "single"
    folder.mkdir(exist_ok=True)
    (folder / "x.ipynb").write_bytes(path.read_bytes())
    _batch(folder, tmp_path / "single-out", threads)
    return _rows(tmp_path / "single-out")["x"]["total"]


def test_gradescope_zip(samples, tmp_path, threads):
    archive = tmp_path / "gs.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(samples[0], "assignment_1_export/submission_111/sequence_models.ipynb")
        zf.write(samples[1], "assignment_1_export/submission_222/sequence_models.ipynb")
        zf.writestr(
            "assignment_1_export/submission_metadata.yml",
            "submission_111:\n  :submitters:\n  - :name: Ada\n    :sid: '42'\n    :email: ada@example.edu\n"
            "submission_222:\n  :submitters:\n  - :name: Alan\n    :sid: '43'\n",
        )
    report = _batch(archive, tmp_path / "out", threads, gradescope=True, lms="gradescope")
    rows = _rows(tmp_path / "out")
    assert report.layout == "gradescope" and set(rows) == {"42", "43"}
    assert (rows["42"]["name"], rows["42"]["email"]) == ("Ada", "ada@example.edu") and rows["43"]["name"] == "Alan"
    with open(tmp_path / "out" / "gradescope-grades.csv") as f:
        lms = list(csv.reader(f))
    assert lms[0] == ["Name", "SID", "Email", "sequence_models"]
    assert lms[1] == ["Ada", "42", "ada@example.edu", rows["42"]["total"]]
    gs = json.loads((tmp_path / "out" / "gradescope" / "42" / "results.json").read_text())
    assert gs["score"] == 25 and all({"name", "score", "max_score"} <= set(t) for t in gs["tests"])


def test_rerun_reuses_results_and_gradebook_holds_every_score(samples, tmp_path, threads):
    db = tmp_path / "elsewhere.db"
    first = _batch(samples[0].parent, tmp_path / "out", threads, db_url=f"sqlite:///{db}")
    csv_before = (tmp_path / "out" / "grades.csv").read_bytes()
    second = _batch(samples[0].parent, tmp_path / "out", threads, db_url=f"sqlite:///{db}")
    assert first.graded == 6 and second.reused == 6 and second.graded == 0
    assert (tmp_path / "out" / "grades.csv").read_bytes() == csv_before
    from nbgrader.api import Gradebook

    rows = _rows(tmp_path / "out")
    with Gradebook(f"sqlite:///{db}") as gb:
        for student, row in rows.items():
            nb = gb.find_submission_notebook("sequence_models", "sequence_models", student)
            assert nb.score == pytest.approx(float(row["total"]))
    assert not (tmp_path / "out" / "gradebook.db").exists()


@pytest.mark.parametrize("argv_tail, words", [(["--out", "OUT"], "no such file or folder")])
def test_missing_submissions_path_exits_2(tmp_path, capsys, argv_tail, words):
    argv = [
        "batch",
        str(tmp_path / "missing"),
        "--assignment",
        "sequence_models",
        *[a.replace("OUT", str(tmp_path / "out")) for a in argv_tail],
    ]
    assert main(argv) == 2
    assert words in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_empty_folder_unreachable_scheduler_and_unwritable_out_exit_2(samples, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [
        (
            ["batch", str(empty), "--assignment", "sequence_models", "--out", str(tmp_path / "o1")],
            "no notebooks found",
            tmp_path / "o1",
        ),
        (
            [
                "batch",
                str(samples[0].parent),
                "--assignment",
                "sequence_models",
                "--out",
                str(tmp_path / "o2"),
                "--scheduler",
                "tcp://127.0.0.1:9",
            ],
            "cannot reach the Dask scheduler",
            tmp_path / "o2",
        ),
        (
            ["batch", str(samples[0].parent), "--assignment", "sequence_models", "--out", "/proc/seqgrade-out"],
            "cannot write",
            None,
        ),
        (
            ["batch", str(samples[0].parent), "--assignment", "nope", "--out", str(tmp_path / "o4")],
            "unknown assignment",
            tmp_path / "o4",
        ),
    ]
    for argv, words, out in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert words in err and len(err.splitlines()) == 1, err
        if out is not None:
            assert not out.exists()


def test_discover_rejects_a_file_that_is_not_a_zip(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("hello")
    with pytest.raises(UsageError, match="not a .zip"):
        discover(path, "sequence_models")


@pytest.mark.slow
def test_same_grades_on_a_dask_cluster(samples, tmp_path, threads):
    """A Dask LocalCluster's executor gives the same grades.csv and JSON as a local run (1 vs 2 local
    workers is covered by the corpus determinism test)."""
    from distributed import Client, LocalCluster

    _batch(samples[0].parent, tmp_path / "local", threads)
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        run_batch(
            BatchConfig(str(samples[0].parent), "sequence_models", str(tmp_path / "dask"), limits=LIMITS),
            executor=client.get_executor(),
        )
    assert (tmp_path / "dask" / "grades.csv").read_bytes() == (tmp_path / "local" / "grades.csv").read_bytes()
    for student in ("student01", "student02", "student03"):
        rel = Path("results") / f"{student}.json"
        assert (tmp_path / "dask" / rel).read_bytes() == (tmp_path / "local" / rel).read_bytes()


@pytest.mark.slow
def test_kill_9_then_resume_equals_an_uninterrupted_run(samples, tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "grader.cli",
        "batch",
        str(samples[0].parent),
        "--assignment",
        "sequence_models",
        "--workers",
        "1",
        "--call-timeout",
        "3",
    ]
    subprocess.run([*cmd, "--out", str(tmp_path / "clean")], check=True, capture_output=True)
    proc = subprocess.Popen(
        [*cmd, "--out", str(tmp_path / "killed")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    results = tmp_path / "killed" / "results"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(results.glob("*.json"))) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list(results.glob("*.json")))
    assert 2 <= done_before < 6 and not (tmp_path / "killed" / "grades.csv").exists()
    resumed = subprocess.run([*cmd, "--out", str(tmp_path / "killed")], check=True, capture_output=True, text=True)
    assert f"{done_before} reused" in resumed.stdout
    for rel in [
        "grades.csv",
        *[f"results/student0{i}.json" for i in range(1, 7)],
        *[f"feedback/student0{i}.html" for i in range(1, 7)],
    ]:
        assert (tmp_path / "killed" / rel).read_bytes() == (tmp_path / "clean" / rel).read_bytes(), rel
    assert not [p for p in (tmp_path / "killed").rglob("*.tmp")]


def test_a_new_gradebook_gets_nbgraders_own_schema_version_without_the_alembic_command(tmp_path, monkeypatch):
    """seqgrade creates SQLite gradebooks itself; the schema version it writes is the one `alembic heads`
    reports for nbgrader's migrations, and nbgrader's API then opens the database as its own."""
    import os
    import sys

    from nbgrader.api import Gradebook, get_alembic_version

    from grader.batch.outputs import _create_empty_gradebook, alembic_head

    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    assert alembic_head() == get_alembic_version()
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    _create_empty_gradebook(url)
    monkeypatch.setenv("PATH", "")  # opening it must not need the alembic command
    with Gradebook(url) as gb:
        gb.update_or_create_assignment("a")
        assert [a.name for a in gb.assignments] == ["a"]
