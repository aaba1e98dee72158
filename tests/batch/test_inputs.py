"""Batch inputs: student ids are kept as given and never merged; no archive entry stops a batch.

Discovery-level tests build folders and zips and only look at what ``discover`` finds (no grading);
two end-to-end tests grade through ``run_batch`` like tests/batch/test_batch.py. Canvas and Gradescope
exports: tests/batch/test_lms_exports.py.
"""

import csv
import json
import os
import stat
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.batch import entries
from grader.batch.identity import file_stem, is_plain
from grader.batch.inputs import discover
from grader.cli import main
from grader.errors import ArchiveError

from .archives import _found, _zip
from .test_batch import _batch, _rows, threads  # noqa: F401 (threads: the module's one-grader executor)

SPELLINGS = ["jürgen", "jörgen", "anna maria", "anna_maria", "Ada", "ada"]


def _patch_bytes(path: Path, old: bytes, new: bytes) -> None:
    """Replace bytes of the written zip (names in both headers, or stored data) by as many other bytes."""
    data = path.read_bytes()
    assert len(old) == len(new) and old in data
    path.write_bytes(data.replace(old, new))


# --- identity ---------------------------------------------------------------------------------------


def test_ids_that_differ_only_in_accents_spaces_or_case_are_different_students(tmp_path):
    for student in SPELLINGS:
        (tmp_path / f"{student}.ipynb").write_text(f'{{"who": "{student}"}}')
    jobs, skipped, _, _ = _found(tmp_path)
    assert set(jobs) == set(SPELLINGS) and not skipped  # today's ids were reduced to [A-Za-z0-9_.@-] and merged
    assert all(json.loads(jobs[s])["who"] == s for s in SPELLINGS)
    assert len({file_stem(s) for s in SPELLINGS}) == len(SPELLINGS)


def test_a_file_name_that_is_not_utf8_is_a_student_of_its_own(tmp_path):
    (tmp_path / "jürgen.ipynb").write_bytes(b"1")
    (Path(os.fsdecode(bytes(tmp_path))) / os.fsdecode(b"j\xfcrgen.ipynb")).write_bytes(b"2")  # Latin-1 bytes
    jobs, skipped, _, _ = _found(tmp_path)
    assert jobs == {"jürgen": b"1", "j\\xfcrgen": b"2"} and not skipped  # an id any CSV or JSON file can hold


def test_file_stems_keep_plain_ids_and_give_every_other_id_its_own_name():
    assert [file_stem(s) for s in ("student01", "1001", "ada@uni.edu", "anna_maria")] == [
        "student01",
        "1001",
        "ada@uni.edu",
        "anna_maria",
    ]
    assert file_stem("jürgen").startswith("jurgen~") and file_stem("anna maria").startswith("anna_maria~")
    # a plain id that looks like another id's stem is still itself: the "~" form is never plain
    assert not is_plain(file_stem("anna maria")) and file_stem(file_stem("anna maria")) != file_stem("anna maria")
    for awkward in ("", ".", "..", "con", "con.txt", "Con", "a.", "x" * 65, "a/b", "\\", "日本語", "\ud800"):
        stem = file_stem(awkward)
        assert stem != awkward and "~" in stem and len(stem) <= 64 and stem.isascii() and stem == stem.lower()


@given(st.lists(st.text(max_size=80), min_size=2, max_size=12, unique=True))
def test_file_stem_is_injective_and_a_safe_file_name(ids):
    stems = [file_stem(s) for s in ids]
    assert len(set(stems)) == len(ids)
    assert len({s.lower() for s in stems}) == len(ids)  # also on a case-insensitive file system
    for student, stem in zip(ids, stems):
        assert 0 < len(stem) <= 64 and stem.isascii() and stem not in (".", "..") and not stem.startswith(".")
        assert not set(stem) & set('/\\:*?"<>|\0') and stem == stem.lower()
        assert (stem == student) == is_plain(student)


# A student id as a folder name in a zip: anything but the separators (NUL ends a zip name), and not
# what discovery leaves out on purpose (hidden names, "." and "..").
ID = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\\\0"), min_size=1, max_size=90).filter(
    lambda s: not s.startswith(".") and s != "__MACOSX"
)


@given(st.lists(ID, min_size=1, max_size=8, unique=True))
def test_discovery_gives_one_job_per_distinct_student_id(ids):
    """Property: any set of distinct ids (Unicode, spaces, case, names longer than a file name may be)
    in an nbgrader tree, zipped and, where the names fit a file system, as a folder: one job each,
    holding that student's own notebook, and nothing skipped."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        entries = [
            (f"submitted/{s}/sequence_models/sequence_models.ipynb", json.dumps({"who": s}).encode()) for s in ids
        ]
        sources = [_zip(tmp / "export.zip", entries)]
        if all(len(s.encode()) <= 255 for s in ids):
            for name, data in entries:
                (tmp / "tree" / name).parent.mkdir(parents=True)
                (tmp / "tree" / name).write_bytes(data)
            sources.append(tmp / "tree")
        for src in sources:
            jobs, skipped, unreadable, found = _found(src)
            assert found.layout == "nbgrader" and not skipped and not unreadable
            assert sorted(jobs) == sorted(ids)
            assert all(json.loads(jobs[s])["who"] == s for s in ids)


# --- archive entries ----------------------------------------------------------------------------------


def test_an_entry_name_longer_than_a_file_name_is_unpacked_and_named(tmp_path):
    long = "lovelace_1001_5001_" + "ü" * 200 + ".ipynb"  # 425 bytes: today OSError, File name too long
    jobs, _, _, found = _found(
        _zip(tmp_path / "c.zip", [(long, b'{"who": 1}'), ("turing_1002_5002_a.ipynb", b'{"who": 2}')])
    )
    assert jobs == {"1001": b'{"who": 1}', "1002": b'{"who": 2}'}
    name = Path(next(j.path for j in found.jobs if j.student == "1001")).name
    assert len(name.encode()) <= 255 and name.startswith("lovelace_1001_5001_ü") and name.endswith(".ipynb")


@pytest.mark.parametrize("order", ["file first", "folder first"])
def test_a_file_and_a_folder_of_one_name_are_both_read(tmp_path, order):
    pair = [("work", b"a file called work"), ("work/turing_1002_5002_x.ipynb", b'{"who": 2}')]
    entries = [*(pair if order == "file first" else pair[::-1]), ("lovelace_1001_5001_x.ipynb", b'{"who": 1}')]
    jobs, skipped, _, _ = _found(_zip(tmp_path / "c.zip", entries))  # today FileExistsError / IsADirectoryError
    assert jobs == {"1001": b'{"who": 1}', "1002": b'{"who": 2}'} and skipped == {"work": "not a notebook (.ipynb)"}


def test_repeated_entry_names_count_once_the_later_entry_graded(tmp_path):
    entries = [("ada.ipynb", b'{"v": 1}'), ("bob.ipynb", b"{}"), ("ada.ipynb", b'{"v": 2}')]
    jobs, skipped, _, _ = _found(_zip(tmp_path / "f.zip", entries))
    assert jobs == {"ada": b'{"v": 2}', "bob": b"{}"}  # today the second overwrote the first without a word
    assert skipped == {"ada.ipynb": "duplicate for student ada; graded a later archive entry of the same name instead"}


def test_names_with_dot_dot_or_a_leading_slash_stay_inside_and_are_graded(tmp_path):
    entries = [
        ("../../lovelace_1001_5001_x.ipynb", b"1"),
        ("/abs/turing_1002_5002_x.ipynb", b"2"),
        ("a/./../hopper_1003_5003_x.ipynb", b"3"),
    ]
    jobs, _, _, found = _found(_zip(tmp_path / "c.zip", entries))  # today silently dropped: "no notebooks found"
    assert jobs == {"1001": b"1", "1002": b"2", "1003": b"3"}
    assert all(Path(job.path).resolve().is_relative_to(Path(found.workdir).resolve()) for job in found.jobs)


def test_names_without_the_utf8_flag_are_read_as_utf8_where_valid(tmp_path):
    # zipfile sets the UTF-8 flag itself for non-ASCII names: write ASCII stand-ins, then put the real bytes in.
    path = _zip(
        tmp_path / "w.zip",
        [("jXXrgen.ipynb", b"1"), ("jYYrgen.ipynb", b"2"), ("jZrgen.ipynb", b"3"), ("jQrgen.ipynb", b"4")],
    )
    for old, new in [(b"jXX", "jü".encode()), (b"jYY", "jö".encode()), (b"jZ", b"j\xfc"), (b"jQ", b"j\xf6")]:
        _patch_bytes(path, old, new)  # UTF-8 without the flag (macOS), and Latin-1 (an old Windows tool)
    jobs, skipped, _, _ = _found(path)
    assert len(jobs) == 4 and {"jürgen", "jörgen"} <= set(jobs) and not skipped
    assert jobs["jürgen"] == b"1" and jobs["jörgen"] == b"2"


def test_an_entry_that_cannot_be_unpacked_is_its_students_problem_and_the_rest_is_read(tmp_path):
    path = tmp_path / "c.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("lovelace_1001_5001_x.ipynb", b"1")
        zf.writestr("turing_1002_5002_x.ipynb", b"{" + b"A" * 64 + b"}")
        link = zipfile.ZipInfo("hopper_1003_5003_x.ipynb")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
    _patch_bytes(path, b"A" * 64, b"B" * 64)  # stored data no longer matches its CRC
    jobs, skipped, unreadable, _ = _found(path)  # today the CRC error ended the whole batch ("not a readable zip")
    assert jobs == {"1001": b"1"}
    assert set(unreadable) == {"1002", "1003"}
    assert unreadable["1002"].startswith("the archive entry could not be unpacked: Bad CRC-32")
    assert unreadable["1003"] == "the archive entry is a symbolic link, not a file"
    assert skipped["turing_1002_5002_x.ipynb"] == unreadable["1002"]


def test_size_caps_refuse_one_notebook_or_the_whole_archive(tmp_path, monkeypatch):
    monkeypatch.setattr(entries, "MAX_NOTEBOOK_BYTES", 100)
    path = _zip(
        tmp_path / "c.zip",
        [
            ("lovelace_1001_5001_x.ipynb", b"1" * 101),
            ("turing_1002_5002_x.ipynb", b"2"),
            ("hopper_1003_5003_video.mp4", b"3" * 10_000),
        ],
    )  # not a notebook: not unpacked
    jobs, _, unreadable, _ = _found(path)
    assert jobs == {"1002": b"2"} and "notebooks over 0 MB are not graded" in unreadable["1001"]
    monkeypatch.setattr(entries, "MAX_ZIP_BYTES", 100)
    _zip(path, [(f"s{i}.ipynb", b"x" * 60) for i in range(2)])
    with pytest.raises(ArchiveError, match="add up to"):
        discover(path, "sequence_models")
    monkeypatch.setattr(entries, "MAX_ZIP_FILES", 1)
    with pytest.raises(ArchiveError, match="holds 2 entries"):
        discover(path, "sequence_models")


def test_a_corrupt_zip_is_one_typed_error_and_one_line_from_the_cli(tmp_path, capsys):
    good = _zip(tmp_path / "good.zip", [("ada.ipynb", b"{}")]).read_bytes()
    (tmp_path / "cut.zip").write_bytes(good[: len(good) // 2])
    with pytest.raises(ArchiveError, match="not a readable zip file"):
        discover(tmp_path / "cut.zip", "sequence_models")
    assert (
        main(["batch", str(tmp_path / "cut.zip"), "--assignment", "sequence_models", "--out", str(tmp_path / "out")])
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert "not a readable zip file" in err and len(err.splitlines()) == 1 and not (tmp_path / "out").exists()


# --- end to end -----------------------------------------------------------------------------------------


def test_batch_keeps_four_students_whose_ids_used_to_merge(released, tmp_path, threads):  # noqa: F811
    subs = tmp_path / "subs"
    subs.mkdir()
    notebooks = {
        "jürgen": released[1].read_bytes(),
        "jörgen": released[0].read_bytes(),
        "anna maria": b"not a notebook",
        "anna_maria": b'{"cells": ',
    }
    for student, data in notebooks.items():
        (subs / f"{student}.ipynb").write_bytes(data)
    report = _batch(subs, tmp_path / "out", threads)
    rows = _rows(tmp_path / "out")
    assert set(rows) == set(notebooks) and not report.skipped  # today: 2 rows, 2 "duplicate ... skipped"
    assert float(rows["jürgen"]["total"]) == 25 and float(rows["jörgen"]["total"]) < 25
    assert rows["anna maria"]["status"] == rows["anna_maria"]["status"] == "invalid"
    for student in notebooks:
        stored = json.loads((tmp_path / "out" / "results" / f"{file_stem(student)}.json").read_text())
        assert stored["notebook"] == f"{student}.ipynb"
        assert (tmp_path / "out" / "feedback" / f"{file_stem(student)}.html").is_file()
    assert len(list((tmp_path / "out" / "results").glob("*.json"))) == 4
    again = _batch(subs, tmp_path / "out", threads)  # every result is found again under its own name
    assert again.reused == 4 and again.graded == 0


def test_batch_with_bad_entries_grades_everything_else(released, tmp_path, threads):  # noqa: F811
    path = tmp_path / "c.zip"
    _zip(
        path,
        [
            ("lovelace_1001_5001_" + "x" * 300 + ".ipynb", released[1].read_bytes()),
            ("work", b"a file"),
            ("work/turing_1002_5002_x.ipynb", b"not a notebook"),
            ("hopper_1003_5003_x.ipynb", b"{" + b"A" * 64 + b"}"),
        ],
    )
    _patch_bytes(path, b"A" * 64, b"B" * 64)
    report = _batch(path, tmp_path / "out", threads)  # today: OSError, File name too long, and no grades.csv
    rows = _rows(tmp_path / "out")
    assert float(rows["1001"]["total"]) == 25 and rows["1002"]["status"] == "invalid"
    assert dict(report.skipped)["hopper_1003_5003_x.ipynb"].startswith("the archive entry could not be unpacked")
    assert rows["1003"]["status"] == "invalid" and rows["1003"]["reason"].startswith(
        "the archive entry could not be unpacked"
    )
    with open(tmp_path / "out" / "grades.csv", newline="") as f:
        assert len(list(csv.reader(f))) == 1 + len(rows)
