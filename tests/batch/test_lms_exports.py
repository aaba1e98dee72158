"""Batch inputs from an LMS: Canvas and Gradescope exports, damaged, re-zipped, resubmitted or holding entries of
any names, are read for what they hold, never merged or stopped by one bad entry (discovery only, no grading)."""

import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from grader.batch.inputs import CANVAS
from grader.errors import ArchiveError, UsageError

from .archives import _found, _zip


def _canvas_zip_bytes() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        return _zip(
            Path(tmp) / "c.zip", [(f"s_{1000 + i}_{5000 + i}_x.ipynb", b'{"cells": []}' * 20) for i in range(4)]
        ).read_bytes()


CANVAS_ZIP = _canvas_zip_bytes()


@given(
    st.lists(st.tuples(st.integers(0, len(CANVAS_ZIP) - 1), st.integers(0, 255)), min_size=1, max_size=6),
    st.integers(0, len(CANVAS_ZIP)),
)
@example([(CANVAS_ZIP.index(b"PK\x01\x02") + 6, 200)], len(CANVAS_ZIP))  # "version needed to extract": 20.0
def test_a_damaged_zip_is_read_in_part_or_refused_with_archive_error(changes, keep):
    """Property: bytes of a Canvas export changed or cut off anywhere: discovery finds what it can read, or
    refuses the whole file with ArchiveError; no other exception (a version field alone once gave
    NotImplementedError)."""
    data = bytearray(CANVAS_ZIP)
    for at, value in changes:
        data[at] = value
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "c.zip").write_bytes(bytes(data[:keep]))
        try:
            jobs, _, unreadable, _ = _found(Path(tmp) / "c.zip")
        except ArchiveError:
            return
        except UsageError as exc:  # every entry's name damaged into something else
            assert "no notebooks found" in str(exc)
            return
    assert not set(jobs) & set(unreadable)


def test_gradescope_resubmission_by_time_and_every_group_member(tmp_path):
    meta = (
        "submission_100:\n  :created_at: 2024-03-02 10:00:00.000000000 -08:00\n"
        "  :submitters:\n  - :name: Ada\n    :sid: '42'\n"
        "submission_200:\n  :created_at: 2024-03-01 10:00:00.000000000 -08:00\n"
        "  :submitters:\n  - :name: Ada\n    :sid: '42'\n"
        "submission_300:\n  :submitters:\n  - :name: Alan\n    :sid: '43'\n  - :name: Grace\n    :sid: '44'\n"
    )
    jobs, skipped, _, found = _found(
        _zip(
            tmp_path / "gs.zip",
            [
                ("export/submission_100/a.ipynb", b"newer"),
                ("export/submission_200/a.ipynb", b"older"),
                ("export/submission_300/a.ipynb", b"group"),
                ("export/submission_metadata.yml", meta.encode()),
            ],
        )
    )
    assert found.layout == "gradescope" and jobs == {"42": b"newer", "43": b"group", "44": b"group"}
    assert "duplicate for student 42" in skipped["export/submission_200/a.ipynb"]


META = (
    "submission_1:\n  :submitters:\n  - :name: Ada\n    :sid: '42'\n"
    "submission_2:\n  :submitters:\n  - :name: Alan\n    :sid: '43'\n"
    "submission_3:\n  :submitters:\n  - :name: Grace\n    :sid: '44'\n"
)


@pytest.mark.parametrize("top", ["", "submission_downloads/"])
def test_a_gradescope_export_is_read_as_one_whatever_a_student_uploaded(tmp_path, top):
    """Gradescope's layout wins over nbgrader's pattern, which a student's uploaded project folder fits
    (submission_N/<assignment>/x.ipynb); the submission folders are found at the export's top, also inside a
    folder whose own name starts with "submission_"; a metadata file or submission folder a student uploaded
    renames nobody."""
    hijack = (
        "submission_1:\n  :submitters:\n  - :name: Mallory\n    :sid: '66'\n"
        "submission_2:\n  :submitters:\n  - :name: Mallory\n    :sid: '66'\n"
    )
    jobs, skipped, _, found = _found(
        _zip(
            tmp_path / "gs.zip",
            [
                (f"{top}submission_1/sequence_models.ipynb", b"ada"),
                (f"{top}submission_2/sequence_models/sequence_models.ipynb", b"alan"),  # a project folder, uploaded
                (f"{top}submission_2/submission_metadata.yml", hijack.encode()),
                (f"{top}submission_3/work/submission_9/sequence_models.ipynb", b"grace"),
                (f"{top}submission_metadata.yml", META.encode()),
            ],
        )
    )
    assert found.layout == "gradescope" and jobs == {"42": b"ada", "43": b"alan", "44": b"grace"}


def test_a_canvas_export_rezipped_in_folders_is_still_canvas(tmp_path):
    """Every notebook named by Canvas: Canvas's layout, though the folders fit nbgrader's pattern."""
    jobs, _, _, found = _found(
        _zip(
            tmp_path / "canvas.zip",
            [
                (f"Fall25/sequence_models/{name}_{user}_{sub}_sequence_models.ipynb", name.encode())
                for name, user, sub in (("ada", 1001, 5001), ("alan", 1002, 5002), ("grace", 1003, 5003))
            ],
        )
    )
    assert found.layout == "canvas" and jobs == {"1001": b"ada", "1002": b"alan", "1003": b"grace"}


def test_folders_named_submission_but_not_gradescopes_are_a_plain_folder_or_nbgrader(tmp_path):
    """submission_week1/ is no Gradescope folder (not submission_<digits>); a student's own submission_7 folder
    deep in an nbgrader tree does not make the tree a Gradescope export."""
    jobs, _, _, found = _found(
        _zip(tmp_path / "week.zip", [(f"submission_week1/{s}.ipynb", s.encode()) for s in ("ada", "bob", "cy")])
    )
    assert found.layout == "folder" and jobs == {"ada": b"ada", "bob": b"bob", "cy": b"cy"}
    jobs, _, _, found = _found(
        _zip(
            tmp_path / "nbgrader.zip",
            [
                ("submitted/ada/sequence_models/sequence_models.ipynb", b"ada"),
                ("submitted/bob/sequence_models/sequence_models.ipynb", b"bob"),
                ("submitted/bob/sequence_models/submission_7/sequence_models.ipynb", b"stray"),
            ],
        )
    )
    assert found.layout == "nbgrader" and jobs == {"ada": b"ada", "bob": b"bob"}


def test_unreadable_gradescope_metadata_is_said_not_ignored(tmp_path):
    """Metadata that does not parse: the submissions are named by their folders, and the batch says why."""
    jobs, skipped, _, found = _found(
        _zip(
            tmp_path / "gs.zip",
            [
                (
                    "submission_metadata.yml",
                    b"submission_1:\n  :submitters:\n  - :name: Ada\n   :sid: '42'\n  bad: [\n",
                ),
                ("submission_1/sequence_models.ipynb", b"ada"),
                ("submission_2/sequence_models.ipynb", b"alan"),
            ],
        )
    )
    assert found.layout == "gradescope" and jobs == {"submission_1": b"ada", "submission_2": b"alan"}
    assert "metadata could not be read (ParserError" in skipped["submission_metadata.yml"]


# Entry names: path pieces an export may hold, or anything at all (long, Unicode, "..", backslashes).
PIECE = st.one_of(
    st.sampled_from(["..", ".", "", "work", "x.ipynb", "__MACOSX", "submission_1"]),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), max_size=140),
)
JUNK = (
    st.tuples(st.lists(PIECE, min_size=1, max_size=4).map("/".join), st.sampled_from(["", ".ipynb", ".pdf", "/"]))
    .map("".join)
    .filter(lambda name: name.strip("/") and not any(CANVAS.match(p) for p in name.replace("\\", "/").split("/")))
)


@given(
    honest=st.lists(st.integers(1000, 1099), min_size=1, max_size=5, unique=True),
    junk=st.lists(st.tuples(JUNK, st.binary(max_size=8)), max_size=8),
    data=st.data(),
)
def test_any_entry_names_leave_every_honest_canvas_entry_graded(honest, junk, data):
    """Property: honest Canvas entries mixed (in any order) with entries of any names never make
    discovery fail, and each honest student gets exactly their own notebook."""
    entries = [
        (f"student_{uid}_{uid + 5000}_{'ä' * (uid % 7) * 40}nb.ipynb", f"honest {uid}".encode()) for uid in honest
    ]
    entries = data.draw(st.permutations(entries + junk))
    with tempfile.TemporaryDirectory() as tmp:
        jobs, skipped, unreadable, found = _found(_zip(Path(tmp) / "c.zip", entries))
    assert found.layout == "canvas" and not unreadable
    assert {uid: jobs.get(str(uid)) for uid in honest} == {uid: f"honest {uid}".encode() for uid in honest}
    assert len(found.jobs) == len(jobs)  # one job per student
