"""What a batch reads from a submitted notebook's JSON besides its grade: the free-text answers of the
manual questions (and which of them are left exactly as released: unanswered), whether it is the released
notebook handed back unchanged, and its code cells (for the similarity report; their digest binds an
override to the code it was made on).

All are read in the trusted process from the parsed JSON only (``grader.notebook.read_notebook``);
nothing in the notebook is executed or imported.
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field

from grader.assignments.registry import Assignment
from grader.errors import InvalidNotebook, SeqgradeError
from grader.notebook import is_test_cell, read_notebook

MAX_ANSWER_CHARS = 20_000  # an answer longer than this is cut (and says so) in the exported pages


@dataclass(frozen=True)
class NotebookFacts:
    answers: dict = field(default_factory=dict)  # manual question id -> the student's text ("" when absent)
    release_identical: bool = False
    code: str = ""  # the student's code cells, test cells left out (the similarity report compares them)
    unanswered: tuple[str, ...] = ()  # manual questions whose answer cell is exactly as released

    @property
    def code_sha256(self) -> str:
        """What the grader ran, as a digest: an override is bound to it (``grader.batch.staff``)."""
        return code_digest(self.code)


def code_digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def _grade_id(cell: dict) -> str:
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
    return grade_id if isinstance(grade_id, str) else ""


def _normal(source: str) -> str:
    """Compare cells ignoring trailing spaces and blank lines at either end."""
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


@functools.lru_cache(maxsize=None)
def released_notebook(assignment_id: str, notebook: str):
    """The student version of the assignment's notebook, generated in memory exactly as ``seqgrade release``
    makes it (read only: it is shared)."""
    import nbformat

    from .nbgrader_import import nbgrader_imported

    nbgrader_imported()  # grader.course.release imports nbgrader, which a batch may be importing in the background
    from grader.course.release import STUDENT_STEPS, convert, source_dir

    return convert(nbformat.read(source_dir(assignment_id) / notebook, as_version=4), STUDENT_STEPS)


@functools.lru_cache(maxsize=None)
def released_cells(assignment_id: str, notebook: str) -> tuple[frozenset, frozenset]:
    """(sources of the released stubs a student must fill in, sources of every released code cell)."""
    nb = released_notebook(assignment_id, notebook)
    stubs = frozenset(_normal(c.source) for c in nb.cells
                      if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
    code = frozenset(_normal(c.source) for c in nb.cells if c.cell_type == "code")
    return stubs, code


def released_answers(assignment: Assignment) -> dict[str, str]:
    """Manual question id -> the text its answer cell is released with ("YOUR ANSWER HERE"), compared
    as ``_normal`` text."""
    questions = {e.id for e in assignment.exercises if e.kind == "manual"}
    cells = released_notebook(assignment.id, assignment.notebook).cells
    return {q: _normal("\n\n".join(c.source for c in cells if _grade_id(c) == q)) for q in questions}


def unanswered(answers: dict[str, str], assignment: Assignment) -> tuple[str, ...]:
    """The manual questions whose answer cell is exactly as released: nothing for staff to grade."""
    try:
        given = released_answers(assignment)
    except (OSError, SeqgradeError):  # the assignment's source is not at hand: every answer waits for staff
        return ()
    return tuple(q for q, text in sorted(answers.items()) if q in given and given[q] and _normal(text) == given[q])


def is_release_identical(cells: list, assignment: Assignment) -> bool:
    """True when every released stub is still there unchanged and no code cell was added or edited:
    the student handed back what they were given (metadata, outputs and cell order do not matter)."""
    stubs, code = released_cells(assignment.id, assignment.notebook)
    sources = {_normal(_text(c)) for c in cells if isinstance(c, dict)}
    own_code = {_normal(_text(c)) for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"} - {""}
    return bool(stubs) and stubs <= sources and own_code <= code


def manual_answers(cells: list, assignment: Assignment) -> dict[str, str]:
    """The text of each manual question's answer cell, found by its nbgrader grade_id (several cells
    with the id are joined; none gives "")."""
    questions = [e.id for e in assignment.exercises if e.kind == "manual"]
    found: dict[str, list[str]] = {q: [] for q in questions}
    for cell in cells:
        if isinstance(cell, dict) and _grade_id(cell) in found:
            found[_grade_id(cell)].append(_text(cell))
    answers = {}
    for q, texts in found.items():
        text = "\n\n".join(texts)
        if len(text) > MAX_ANSWER_CHARS:
            text = text[:MAX_ANSWER_CHARS] + f"\n[... cut: the answer has {len(text)} characters]"
        answers[q] = text
    return answers


def student_code(cells: list) -> str:
    """The code a student wrote or kept: the notebook's code cells in order, test cells left out."""
    return "\n".join(_text(c).rstrip() + "\n" for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"
                     and not is_test_cell(c) and _text(c).strip())


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
    answers = manual_answers(cells, assignment)
    return NotebookFacts(answers=answers, release_identical=identical, code=student_code(cells),
                         unanswered=unanswered(answers, assignment))
