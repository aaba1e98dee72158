"""What a batch reads from a submitted notebook's JSON besides its grade: the free-text answers of the
manual questions (and which of them are left exactly as released, or emptied: unanswered), whether it is the released
notebook handed back unchanged, and its code cells (for the similarity report; their digest binds an
override to the code it was made on).

All are read in the trusted process from the parsed JSON only (``grader.notebook.read_notebook``);
nothing in the notebook is executed or imported.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.assignments.registry import Assignment
from grader.course import ASSIGNMENTS_ROOT
from grader.errors import InvalidNotebook, SeqgradeError
from grader.fsutil import cache_folder, write_atomic
from grader.notebook import cell_source, grade_id, is_solution, is_test_cell, read_notebook

MAX_ANSWER_CHARS = 20_000  # an answer longer than this is cut (and says so) in the exported pages


@dataclass(frozen=True)
class NotebookFacts:
    answers: dict = field(default_factory=dict)  # manual question id -> the student's text ("" when absent)
    release_identical: bool = False
    code: str = ""  # the student's code cells, test cells left out (the similarity report compares them)
    unanswered: tuple[str, ...] = ()  # manual questions whose answer cell is exactly as released, or empty

    @property
    def code_sha256(self) -> str:
        """What the grader ran, as a digest: an override is bound to it (``grader.batch.staff``)."""
        return code_digest(self.code)


def code_digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def _normal(source: str) -> str:
    """Compare cells ignoring trailing spaces and blank lines at either end."""
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


@dataclass(frozen=True)
class ReleasedCell:
    """One cell of the released notebook, as the facts and the similarity report read it."""

    cell_type: str
    source: str
    grade_id: str = ""
    solution: bool = False  # a stub the student fills in


@functools.lru_cache(maxsize=None)
def released(assignment_id: str, notebook: str) -> tuple[ReleasedCell, ...]:
    """The cells of the student version of the assignment's notebook, exactly as ``seqgrade release`` makes it.

    Making it imports nbformat and nbgrader's converters (about 0.8 s of CPU), so the cells are kept in the cache
    folder (grader.fsutil.cache_folder) under a digest of everything they depend on: the source notebook, the
    code that converts it and nbgrader's version."""
    source = ASSIGNMENTS_ROOT / "source" / assignment_id / notebook
    where = _released_path(source)
    if where is not None:
        try:
            return tuple(ReleasedCell(**cell) for cell in json.loads(where.read_text(encoding="utf-8"))["cells"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    import nbformat

    from .nbgrader_import import nbgrader_imported

    nbgrader_imported()  # grader.course.release imports nbgrader, which a batch may be importing in the background
    from grader.course.release import STUDENT_STEPS, convert

    nb = convert(nbformat.read(source, as_version=4), STUDENT_STEPS)  # the very file the cache's name was made from
    cells = tuple(ReleasedCell(c.cell_type, c.source, grade_id(c), is_solution(c)) for c in nb.cells)
    if where is not None:
        try:
            write_atomic(where, json.dumps({"cells": [asdict(c) for c in cells]}))
        except OSError:
            pass
    return cells


def _released_path(source: Path) -> Path | None:
    folder = cache_folder()
    if folder is None:
        return None
    from importlib.metadata import version

    h = hashlib.sha256(version("nbgrader").encode())
    for part in (source, Path(__file__).resolve().parents[1] / "course" / "release.py"):
        h.update(b"\0" + part.read_bytes())
    return folder / f"released-{h.hexdigest()[:24]}.json"


@functools.lru_cache(maxsize=None)
def released_cells(assignment_id: str, notebook: str) -> tuple[frozenset, frozenset]:
    """(sources of the released stubs a student must fill in, sources of every released code cell)."""
    cells = released(assignment_id, notebook)
    stubs = frozenset(_normal(c.source) for c in cells if c.solution)
    code = frozenset(_normal(c.source) for c in cells if c.cell_type == "code")
    return stubs, code


def released_answers(assignment: Assignment) -> dict[str, str]:
    """Manual question id -> the text its answer cell is released with ("YOUR ANSWER HERE"), compared
    as ``_normal`` text."""
    questions = {e.id for e in assignment.exercises if e.kind == "manual"}
    cells = released(assignment.id, assignment.notebook)
    return {q: _normal("\n\n".join(c.source for c in cells if c.grade_id == q)) for q in questions}


def unanswered(
    answers: dict[str, str], assignment: Assignment, present: frozenset[str] | set[str] = frozenset()
) -> tuple[str, ...]:
    """The manual questions with nothing for staff to grade: the answer cell is exactly as released, or it is
    there (``present``: the questions whose answer cell the notebook holds) and holds nothing but white space.
    A question whose answer cell is gone waits for staff: the answer may be in another cell."""
    try:
        given = released_answers(assignment)
    except (OSError, SeqgradeError):  # the assignment's source is not at hand: every answer waits for staff
        return ()
    return tuple(
        q
        for q, text in sorted(answers.items())
        if q in given and (given[q] and _normal(text) == given[q] or q in present and not _normal(text))
    )


def is_release_identical(cells: list, assignment: Assignment) -> bool:
    """True when every released stub is still there unchanged and no code cell was added or edited:
    the student handed back what they were given (metadata, outputs and cell order do not matter)."""
    stubs, code = released_cells(assignment.id, assignment.notebook)
    sources = {_normal(cell_source(c)) for c in cells if isinstance(c, dict)}
    own_code = {_normal(cell_source(c)) for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"} - {""}
    return bool(stubs) and stubs <= sources and own_code <= code


def answer_cells(cells: list, assignment: Assignment) -> dict[str, list[str]]:
    """Each manual question's answer cells, found by their nbgrader grade_id: their texts in order (none: [])."""
    found: dict[str, list[str]] = {e.id: [] for e in assignment.exercises if e.kind == "manual"}
    for cell in cells:
        if isinstance(cell, dict) and grade_id(cell) in found:
            found[grade_id(cell)].append(cell_source(cell))
    return found


def manual_answers(found: dict[str, list[str]]) -> dict[str, str]:
    """The text of each manual question's answer, from its answer cells (``answer_cells``: several are joined;
    none gives "")."""
    answers = {}
    for q, texts in found.items():
        text = "\n\n".join(texts)
        if len(text) > MAX_ANSWER_CHARS:
            text = text[:MAX_ANSWER_CHARS] + f"\n[... cut: the answer has {len(text)} characters]"
        answers[q] = text
    return answers


def student_code(cells: list) -> str:
    """The code a student wrote or kept: the notebook's code cells in order, test cells left out."""
    return "\n".join(
        cell_source(c).rstrip() + "\n"
        for c in cells
        if isinstance(c, dict) and c.get("cell_type") == "code" and not is_test_cell(c) and cell_source(c).strip()
    )


def read_facts(path: str, assignment: Assignment) -> NotebookFacts:
    """The facts of one submitted notebook; an unreadable one has no answers and is not the release."""
    try:
        nb, _ = read_notebook(path)
    except InvalidNotebook:
        return NotebookFacts(answers={e.id: "" for e in assignment.exercises if e.kind == "manual"})
    cells = nb.get("cells") or []
    try:
        identical = is_release_identical(cells, assignment)
    except (OSError, SeqgradeError):  # the assignment's source is not at hand (an installed copy without it)
        identical = False
    found = answer_cells(cells, assignment)
    answers = manual_answers(found)
    present = {q for q, texts in found.items() if texts}
    return NotebookFacts(
        answers=answers,
        release_identical=identical,
        code=student_code(cells),
        unanswered=unanswered(answers, assignment, present),
    )
