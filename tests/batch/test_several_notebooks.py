"""Several notebooks in one submission: one is graded by a stated rule (grader.batch.choice), and the student's
row, progress line and feedback page say which one and which were not.

Today a Canvas submission with the solved notebook and an untouched scratch copy was graded by the file that
sorts last: 0 points as an unmodified release, and one "duplicate skipped" line in the batch's output.
"""

import io
import json
import os
import zipfile

from rich.console import Console

from grader.batch.identity import file_stem
from grader.batch.progress import batch_progress
from grader.batch.run import BatchConfig, run_batch

from .archives import _found, _zip
from .test_batch import LIMITS, _rows, threads  # noqa: F401 (threads: the module's one-grader executor)

RULE = "Of several notebooks seqgrade grades one that can be read, one named sequence_models.ipynb, else the newest"


def test_the_assignments_notebook_name_wins_over_a_later_canvas_upload(tmp_path):
    jobs, skipped, _, found = _found(
        _zip(
            tmp_path / "canvas.zip",
            [
                ("lovelace_1001_5001_sequence_models.ipynb", b"solved"),
                ("lovelace_1001_5002_Untitled.ipynb", b"scratch"),  # uploaded later: today it was graded
                ("turing_1002_5003_sequence_models-2.ipynb", b"solved"),  # as Canvas renames a file handed in again
                ("turing_1002_5004_scratch.ipynb", b"scratch"),
            ],
        )
    )
    assert found.layout == "canvas" and jobs == {"1001": b"solved", "1002": b"solved"}
    assert skipped == {
        "lovelace_1001_5002_Untitled.ipynb": "duplicate for student 1001; graded "
        "lovelace_1001_5001_sequence_models.ipynb instead: it is not named sequence_models.ipynb",
        "turing_1002_5004_scratch.ipynb": "duplicate for student 1002; graded "
        "turing_1002_5003_sequence_models-2.ipynb instead: it is not named sequence_models.ipynb",
    }
    chosen = {job.student: job.chosen for job in found.jobs}
    assert chosen["1001"] == (
        "2 notebooks were handed in: graded sequence_models.ipynb; not graded: Untitled.ipynb (it is not named "
        f"sequence_models.ipynb). {RULE}"
    )


def test_else_the_newest_file_of_a_folder_is_graded(tmp_path):
    folder = tmp_path / "course" / "submitted" / "ada" / "sequence_models"
    folder.mkdir(parents=True)
    (folder / "attempt.ipynb").write_bytes(b"new")
    (folder / "zz_old.ipynb").write_bytes(b"old")  # sorts last: today it was graded
    os.utime(folder / "attempt.ipynb", (2_000_000_000, 2_000_000_000))
    os.utime(folder / "zz_old.ipynb", (1_000_000_000, 1_000_000_000))
    jobs, skipped, _, found = _found(tmp_path / "course")
    assert jobs == {"ada": b"new"}
    assert skipped == {
        "submitted/ada/sequence_models/zz_old.ipynb": "duplicate for student ada; graded "
        "submitted/ada/sequence_models/attempt.ipynb instead: it is older"
    }
    assert found.jobs[0].chosen.startswith("2 notebooks were handed in: graded attempt.ipynb; not graded: zz_old")


def test_else_the_newest_entry_of_a_zip_is_graded(tmp_path):
    def entry(name, when):
        return zipfile.ZipInfo(name, date_time=when)

    jobs, skipped, _, _ = _found(
        _zip(
            tmp_path / "nb.zip",
            [
                (entry("submitted/ada/sequence_models/b.ipynb", (2025, 3, 2, 9, 0, 0)), b"new"),
                (entry("submitted/ada/sequence_models/c.ipynb", (2025, 3, 1, 9, 0, 0)), b"old"),
            ],
        )
    )
    assert jobs == {"ada": b"new"}  # today: c.ipynb, the name that sorts last
    assert skipped["submitted/ada/sequence_models/c.ipynb"].endswith("instead: it is older")


def test_the_solved_notebook_beside_a_scratch_copy_keeps_its_points_and_every_output_says_so(
    released,
    tmp_path,
    threads,  # noqa: F811
):
    archive = _zip(
        tmp_path / "canvas.zip",
        [
            ("lovelace_1001_5001_sequence_models.ipynb", released[1].read_bytes()),  # solved
            ("lovelace_1001_5002_Untitled.ipynb", released[0].read_bytes()),  # the release, untouched
        ],
    )
    out = tmp_path / "out"
    console = Console(file=io.StringIO(), width=400)
    with batch_progress(console, 1) as progress:
        report = run_batch(
            BatchConfig(str(archive), "sequence_models", str(out), limits=LIMITS), executor=threads, progress=progress
        )
    said = (
        "2 notebooks were handed in: graded sequence_models.ipynb; not graded: Untitled.ipynb (it is not named "
        f"sequence_models.ipynb). {RULE}"
    )
    row = _rows(out)["1001"]
    assert float(row["total"]) == 25 and row["status"] == "graded"  # today: 0, as an unmodified release
    assert said in row["reason"]
    assert said in console.file.getvalue().splitlines()[0]  # the progress line
    assert json.loads((out / "results" / f"{file_stem('1001')}.json").read_text())["chosen"] == said
    assert said in (out / "feedback" / f"{file_stem('1001')}.html").read_text()
    assert "lovelace_1001_5002_Untitled.ipynb" in dict(report.skipped)
