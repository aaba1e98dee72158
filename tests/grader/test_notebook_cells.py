"""The one reader of a notebook's cells (grader.notebook: cell_source, nbgrader_meta, grade_id, ...): malformed
metadata reads as none, the same way in every module that reads cells, and no module reads it by hand."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from grader.audit.selfchecks import is_selfcheck
from grader.batch.facts import answer_cells, student_code
from grader.checking.exercise import Assignment, Exercise
from grader.course.placeholders import PLACEHOLDERS
from grader.course.release import placeholders_left
from grader.notebook import cell_source, checksum, grade_id, is_grade, is_solution, is_test_cell, nbgrader_meta, points

ROOT = Path(__file__).resolve().parents[2]
GRADED = {"grade": True, "grade_id": "test_f", "solution": False, "points": 2.0, "checksum": "abc", "locked": True}
# metadata someone edited by hand: a cell's metadata, or its "nbgrader" entry, that is not an object
MALFORMED = [[], ["nbgrader"], "nbgrader", None, 3, {"nbgrader": []}, {"nbgrader": "test_f"}, {"nbgrader": None}]
MISSING = [{}, {"nbgrader": {}}, {"other": {"grade_id": "test_f"}}]


def _cell(metadata, source="x = 1\n", cell_type="code") -> dict:
    return {"cell_type": cell_type, "source": source, "metadata": metadata, "outputs": [], "execution_count": None}


def _read(cell) -> tuple:
    return nbgrader_meta(cell), grade_id(cell), checksum(cell), is_grade(cell), is_solution(cell), points(cell)


NONE = ({}, "", "", False, False, None)


def test_a_graded_cell_reads_its_metadata():
    cell = _cell({"nbgrader": GRADED})
    assert _read(cell) == (GRADED, "test_f", "abc", True, False, 2.0)
    assert is_test_cell(cell)
    stub = _cell({"nbgrader": {"grade": False, "grade_id": "f", "solution": True}})
    assert (grade_id(stub), is_grade(stub), is_solution(stub), points(stub)) == ("f", False, True, None)
    assert not is_test_cell(stub)


@pytest.mark.parametrize("metadata", MALFORMED + MISSING, ids=repr)
def test_malformed_or_missing_metadata_reads_as_none(metadata):
    cell = _cell(metadata)
    assert _read(cell) == NONE
    assert not is_test_cell(cell)
    assert _read(nbformat.from_dict(cell)) == NONE  # nbformat's NotebookNode, as nbformat.read gives it


def test_a_cell_without_metadata_or_not_a_cell_reads_as_none():
    no_metadata = {"cell_type": "code", "source": "x = 1\n"}
    for cell in (no_metadata, [], "cell", None, 7):
        assert _read(cell) == NONE
        assert cell_source(cell) == ("x = 1\n" if cell is no_metadata else "")


@pytest.mark.parametrize(("value", "want"), [("test_f", "test_f"), (3, ""), (None, ""), (["test_f"], "")])
def test_a_grade_id_or_checksum_that_is_not_text_reads_as_none(value, want):
    cell = _cell({"nbgrader": {"grade_id": value, "checksum": value}})
    assert (grade_id(cell), checksum(cell)) == (want, want)


@pytest.mark.parametrize(("value", "want"), [(2, 2.0), (1.5, 1.5), (0, 0.0), (True, None), ("2", None), (None, None)])
def test_points_are_a_number_or_none(value, want):
    assert points(_cell({"nbgrader": {"points": value}})) == want


def test_a_source_is_text_or_its_lines_joined():
    assert cell_source(_cell({}, ["def f():\n", "    return 1\n"])) == "def f():\n    return 1\n"
    assert cell_source(_cell({}, ["a\n", 3, None, "b"])) == "a\nb"  # what is not text is left out
    assert [cell_source(_cell({}, s)) for s in (None, 3, {"a": 1})] == ["", "", ""]
    assert cell_source({"cell_type": "code"}) == ""


@pytest.mark.parametrize("metadata", MALFORMED, ids=repr)
def test_every_reader_of_cells_treats_malformed_metadata_as_none(metadata):
    """The batch's facts, the audit and the release read a cell with broken metadata as a cell without any."""
    manual = Exercise("test_f", "manual", manual_points=1)
    assignment = Assignment(id="tiny", notebook="tiny.ipynb", exercises=(manual,))
    test_cell = _cell({"nbgrader": GRADED}, "assert f() == 1\n")
    broken = _cell(metadata, "def f():\n    return 1\n")
    assert student_code([test_cell, broken]) == "def f():\n    return 1\n"  # never taken for a test cell
    assert answer_cells([broken], assignment) == {"test_f": []}
    assert answer_cells([test_cell], assignment) == {"test_f": ["assert f() == 1\n"]}
    node = nbformat.from_dict(broken)
    assert not is_selfcheck(node)
    nb = nbformat.from_dict({"cells": [{**broken, "id": "c1", "source": PLACEHOLDERS[0]}], "metadata": {}})
    assert placeholders_left(nb) == [("c1", PLACEHOLDERS[0])]  # named by its cell id: it has no grade id


HAND_READ = re.compile(r"""\.get\(\s*["']nbgrader["']|\[\s*["']nbgrader["']\s*\]|\.get\(\s*["']metadata["']""")


def hand_reads(root: Path) -> list[str]:
    """Where a module of ``root``'s grader package reads a cell's metadata itself instead of through grader.notebook."""
    return [
        f"{p.relative_to(root)}:{n}"
        for p in sorted((root / "grader").rglob("*.py"))
        if p.name != "notebook.py"
        for n, line in enumerate(p.read_text().splitlines(), start=1)
        if HAND_READ.search(line)
    ]


def test_no_module_reads_cell_metadata_by_hand():
    assert hand_reads(ROOT) == []


def test_a_hand_read_is_found(tmp_path):
    (tmp_path / "grader").mkdir()
    (tmp_path / "grader" / "late.py").write_text(
        'gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")\n'
        'ok = cell.metadata["nbgrader"]\nfine = grade_id(cell)\n'
    )
    assert hand_reads(tmp_path) == ["grader/late.py:1", "grader/late.py:2"]
