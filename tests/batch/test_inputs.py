"""Batch inputs: student ids are kept as given and never merged; no archive entry stops a batch.

Discovery-level tests build folders and zips and only look at what ``discover`` finds (no grading);
two end-to-end tests grade through ``run_batch`` like tests/batch/test_batch.py.
"""
import csv
import json
import os
import stat
import tempfile
import warnings
import zipfile
from pathlib import Path

import pytest
from hypothesis import example, given, strategies as st

from grader.batch import entries
from grader.batch.identity import file_stem, is_plain
from grader.batch.inputs import CANVAS, discover
from grader.cli import main
from grader.errors import ArchiveError, UsageError

from .test_batch import _batch, _rows, threads  # noqa: F401 (threads: the module's one-grader executor)

SPELLINGS = ["jürgen", "jörgen", "anna maria", "anna_maria", "Ada", "ada"]


def _zip(path: Path, entries) -> Path:
    """A zip of (name or ZipInfo, bytes) in this order; repeated names are kept (zipfile warns about them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(path, "w") as zf:
            for name, data in entries:
                zf.writestr(name, data)
    return path


def _patch_bytes(path: Path, old: bytes, new: bytes) -> None:
    """Replace bytes of the written zip (names in both headers, or stored data) by as many other bytes."""
    data = path.read_bytes()
    assert len(old) == len(new) and old in data
    path.write_bytes(data.replace(old, new))


def _found(src, assignment="sequence_models"):
    found = discover(src, assignment)
    try:
        return ({job.student: Path(job.path).read_bytes() for job in found.jobs}, dict(found.skipped),
                {job.student: job.problem for job in found.unreadable}, found)
    finally:
        found.cleanup()


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
    assert [file_stem(s) for s in ("student01", "1001", "ada@uni.edu", "anna_maria")] == \
        ["student01", "1001", "ada@uni.edu", "anna_maria"]
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
    lambda s: not s.startswith(".") and s != "__MACOSX")


@given(st.lists(ID, min_size=1, max_size=8, unique=True))
def test_discovery_gives_one_job_per_distinct_student_id(ids):
    """Property: any set of distinct ids (Unicode, spaces, case, names longer than a file name may be)
    in an nbgrader tree, zipped and, where the names fit a file system, as a folder: one job each,
    holding that student's own notebook, and nothing skipped."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        entries = [(f"submitted/{s}/sequence_models/sequence_models.ipynb", json.dumps({"who": s}).encode()) for s in ids]
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
    jobs, _, _, found = _found(_zip(tmp_path / "c.zip", [(long, b'{"who": 1}'), ("turing_1002_5002_a.ipynb", b'{"who": 2}')]))
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
    entries = [("../../lovelace_1001_5001_x.ipynb", b"1"), ("/abs/turing_1002_5002_x.ipynb", b"2"),
               ("a/./../hopper_1003_5003_x.ipynb", b"3")]
    jobs, _, _, found = _found(_zip(tmp_path / "c.zip", entries))  # today silently dropped: "no notebooks found"
    assert jobs == {"1001": b"1", "1002": b"2", "1003": b"3"}
    assert all(Path(job.path).resolve().is_relative_to(Path(found.workdir).resolve()) for job in found.jobs)


def test_names_without_the_utf8_flag_are_read_as_utf8_where_valid(tmp_path):
    # zipfile sets the UTF-8 flag itself for non-ASCII names: write ASCII stand-ins, then put the real bytes in.
    path = _zip(tmp_path / "w.zip", [("jXXrgen.ipynb", b"1"), ("jYYrgen.ipynb", b"2"), ("jZrgen.ipynb", b"3"), ("jQrgen.ipynb", b"4")])
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
    path = _zip(tmp_path / "c.zip", [("lovelace_1001_5001_x.ipynb", b"1" * 101), ("turing_1002_5002_x.ipynb", b"2"),
                                    ("hopper_1003_5003_video.mp4", b"3" * 10_000)])  # not a notebook: not unpacked
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
    assert main(["batch", str(tmp_path / "cut.zip"), "--assignment", "sequence_models", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a readable zip file" in err and len(err.splitlines()) == 1 and not (tmp_path / "out").exists()


def _canvas_zip_bytes() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        return _zip(Path(tmp) / "c.zip", [(f"s_{1000 + i}_{5000 + i}_x.ipynb", b'{"cells": []}' * 20) for i in range(4)]).read_bytes()


CANVAS_ZIP = _canvas_zip_bytes()


@given(st.lists(st.tuples(st.integers(0, len(CANVAS_ZIP) - 1), st.integers(0, 255)), min_size=1, max_size=6),
       st.integers(0, len(CANVAS_ZIP)))
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
    meta = ("submission_100:\n  :created_at: 2024-03-02 10:00:00.000000000 -08:00\n  :submitters:\n  - :name: Ada\n    :sid: '42'\n"
            "submission_200:\n  :created_at: 2024-03-01 10:00:00.000000000 -08:00\n  :submitters:\n  - :name: Ada\n    :sid: '42'\n"
            "submission_300:\n  :submitters:\n  - :name: Alan\n    :sid: '43'\n  - :name: Grace\n    :sid: '44'\n")
    jobs, skipped, _, found = _found(_zip(tmp_path / "gs.zip", [
        ("export/submission_100/a.ipynb", b"newer"), ("export/submission_200/a.ipynb", b"older"),
        ("export/submission_300/a.ipynb", b"group"), ("export/submission_metadata.yml", meta.encode())]))
    assert found.layout == "gradescope" and jobs == {"42": b"newer", "43": b"group", "44": b"group"}
    assert "duplicate for student 42" in skipped["export/submission_200/a.ipynb"]


META = ("submission_1:\n  :submitters:\n  - :name: Ada\n    :sid: '42'\n"
        "submission_2:\n  :submitters:\n  - :name: Alan\n    :sid: '43'\n"
        "submission_3:\n  :submitters:\n  - :name: Grace\n    :sid: '44'\n")


@pytest.mark.parametrize("top", ["", "submission_downloads/"])
def test_a_gradescope_export_is_read_as_one_whatever_a_student_uploaded(tmp_path, top):
    """Gradescope's layout wins over nbgrader's pattern, which a student's uploaded project folder fits
    (submission_N/<assignment>/x.ipynb); the submission folders are found at the export's top, also inside a
    folder whose own name starts with "submission_"; a metadata file or submission folder a student uploaded
    renames nobody."""
    hijack = ("submission_1:\n  :submitters:\n  - :name: Mallory\n    :sid: '66'\n"
              "submission_2:\n  :submitters:\n  - :name: Mallory\n    :sid: '66'\n")
    jobs, skipped, _, found = _found(_zip(tmp_path / "gs.zip", [
        (f"{top}submission_1/sequence_models.ipynb", b"ada"),
        (f"{top}submission_2/sequence_models/sequence_models.ipynb", b"alan"),  # a project folder, uploaded
        (f"{top}submission_2/submission_metadata.yml", hijack.encode()),
        (f"{top}submission_3/work/submission_9/sequence_models.ipynb", b"grace"),
        (f"{top}submission_metadata.yml", META.encode())]))
    assert found.layout == "gradescope" and jobs == {"42": b"ada", "43": b"alan", "44": b"grace"}


def test_a_canvas_export_rezipped_in_folders_is_still_canvas(tmp_path):
    """Every notebook named by Canvas: Canvas's layout, though the folders fit nbgrader's pattern."""
    jobs, _, _, found = _found(_zip(tmp_path / "canvas.zip", [
        (f"Fall25/sequence_models/{name}_{user}_{sub}_sequence_models.ipynb", name.encode())
        for name, user, sub in (("ada", 1001, 5001), ("alan", 1002, 5002), ("grace", 1003, 5003))]))
    assert found.layout == "canvas" and jobs == {"1001": b"ada", "1002": b"alan", "1003": b"grace"}


def test_folders_named_submission_but_not_gradescopes_are_a_plain_folder_or_nbgrader(tmp_path):
    """submission_week1/ is no Gradescope folder (not submission_<digits>); a student's own submission_7 folder
    deep in an nbgrader tree does not make the tree a Gradescope export."""
    jobs, _, _, found = _found(_zip(tmp_path / "week.zip", [
        (f"submission_week1/{s}.ipynb", s.encode()) for s in ("ada", "bob", "cy")]))
    assert found.layout == "folder" and jobs == {"ada": b"ada", "bob": b"bob", "cy": b"cy"}
    jobs, _, _, found = _found(_zip(tmp_path / "nbgrader.zip", [
        ("submitted/ada/sequence_models/sequence_models.ipynb", b"ada"),
        ("submitted/bob/sequence_models/sequence_models.ipynb", b"bob"),
        ("submitted/bob/sequence_models/submission_7/sequence_models.ipynb", b"stray")]))
    assert found.layout == "nbgrader" and jobs == {"ada": b"ada", "bob": b"bob"}


def test_unreadable_gradescope_metadata_is_said_not_ignored(tmp_path):
    """Metadata that does not parse: the submissions are named by their folders, and the batch says why."""
    jobs, skipped, _, found = _found(_zip(tmp_path / "gs.zip", [
        ("submission_metadata.yml", b"submission_1:\n  :submitters:\n  - :name: Ada\n   :sid: '42'\n  bad: [\n"),
        ("submission_1/sequence_models.ipynb", b"ada"), ("submission_2/sequence_models.ipynb", b"alan")]))
    assert found.layout == "gradescope" and jobs == {"submission_1": b"ada", "submission_2": b"alan"}
    assert "metadata could not be read (ParserError" in skipped["submission_metadata.yml"]


# Entry names: path pieces an export may hold, or anything at all (long, Unicode, "..", backslashes).
PIECE = st.one_of(st.sampled_from(["..", ".", "", "work", "x.ipynb", "__MACOSX", "submission_1"]),
                  st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), max_size=140))
JUNK = st.tuples(st.lists(PIECE, min_size=1, max_size=4).map("/".join), st.sampled_from(["", ".ipynb", ".pdf", "/"])).map(
    "".join).filter(lambda name: name.strip("/") and not any(CANVAS.match(p) for p in name.replace("\\", "/").split("/")))


@given(honest=st.lists(st.integers(1000, 1099), min_size=1, max_size=5, unique=True),
       junk=st.lists(st.tuples(JUNK, st.binary(max_size=8)), max_size=8), data=st.data())
def test_any_entry_names_leave_every_honest_canvas_entry_graded(honest, junk, data):
    """Property: honest Canvas entries mixed (in any order) with entries of any names never make
    discovery fail, and each honest student gets exactly their own notebook."""
    entries = [(f"student_{uid}_{uid + 5000}_{'ä' * (uid % 7) * 40}nb.ipynb", f"honest {uid}".encode()) for uid in honest]
    entries = data.draw(st.permutations(entries + junk))
    with tempfile.TemporaryDirectory() as tmp:
        jobs, skipped, unreadable, found = _found(_zip(Path(tmp) / "c.zip", entries))
    assert found.layout == "canvas" and not unreadable
    assert {uid: jobs.get(str(uid)) for uid in honest} == {uid: f"honest {uid}".encode() for uid in honest}
    assert len(found.jobs) == len(jobs)  # one job per student


# --- end to end -----------------------------------------------------------------------------------------

def test_batch_keeps_four_students_whose_ids_used_to_merge(released, tmp_path, threads):  # noqa: F811
    subs = tmp_path / "subs"
    subs.mkdir()
    notebooks = {"jürgen": released[1].read_bytes(), "jörgen": released[0].read_bytes(),
                 "anna maria": b"not a notebook", "anna_maria": b'{"cells": '}
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
    _zip(path, [("lovelace_1001_5001_" + "x" * 300 + ".ipynb", released[1].read_bytes()),
                ("work", b"a file"), ("work/turing_1002_5002_x.ipynb", b"not a notebook"),
                ("hopper_1003_5003_x.ipynb", b"{" + b"A" * 64 + b"}")])
    _patch_bytes(path, b"A" * 64, b"B" * 64)
    report = _batch(path, tmp_path / "out", threads)  # today: OSError, File name too long, and no grades.csv
    rows = _rows(tmp_path / "out")
    assert float(rows["1001"]["total"]) == 25 and rows["1002"]["status"] == "invalid"
    assert dict(report.skipped)["hopper_1003_5003_x.ipynb"].startswith("the archive entry could not be unpacked")
    assert rows["1003"]["status"] == "invalid" and rows["1003"]["reason"].startswith("the archive entry could not be unpacked")
    with open(tmp_path / "out" / "grades.csv", newline="") as f:
        assert len(list(csv.reader(f))) == 1 + len(rows)
