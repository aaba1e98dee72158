"""Student and solution versions of an assignment, made by nbgrader's own preprocessors in memory.

No gradebook database is created and nothing is written inside ``assignments/``: the source notebook
is read, run through nbgrader's steps as a pipeline, and written (atomically) to the output folder
with the assignment's other files (the self-check helper). A notebook that still holds the placeholder
text ``seqgrade new-exercise`` wrote (``grader.course.placeholders``) is refused, naming the cell,
unless the author forces it.

Every cell nbgrader checksums carries, in both versions, the checksum of the text students are given:
``nbgrader validate`` and ``autograde`` compare a notebook's cells with it (a locked cell that differs was
edited; an answer cell that does not was left unanswered). In the student version every step that
changes a cell's text comes before ``ComputeChecksums``; the solution version takes the student
version's checksums, so its filled-in answers count as answers.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearHiddenTests,
    ClearMarkScheme,
    ClearOutput,
    ClearSolutions,
    ComputeChecksums,
    LockCells,
)

from grader.errors import OutputNotWritable, UnknownAssignment, UsageError
from grader.fsutil import ensure_writable_dir, write_atomic
from grader.notebook import checksum, grade_id

from . import ASSIGNMENTS_ROOT  # noqa: F401 (re-exported)
from .placeholders import PLACEHOLDERS

_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


class StripSolutionMarkers:
    """The solution version keeps the solutions but not nbgrader's ``### BEGIN/END SOLUTION`` lines."""

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            cell.source = _MARKER.sub("", cell.source)
        return nb, resources


STUDENT_STEPS = (
    CheckCellMetadata,
    LockCells,
    ClearSolutions,
    ClearOutput,
    ClearHiddenTests,
    ClearMarkScheme,
    ComputeChecksums,
)
SOLUTION_STEPS = (
    CheckCellMetadata,
    LockCells,
    ClearOutput,
    ClearHiddenTests,
    ClearMarkScheme,
    StripSolutionMarkers,
    ComputeChecksums,
)


def assignment_folders(root: Path | None = None) -> list[str]:
    """The assignments of the course root (default ``ASSIGNMENTS_ROOT``), in name order: every folder of ``source/``."""
    source = (ASSIGNMENTS_ROOT if root is None else root) / "source"
    return (
        sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
        if source.is_dir()
        else []
    )


def source_dir(assignment: str, root: Path | None = None) -> Path:
    root = ASSIGNMENTS_ROOT if root is None else root
    folder = root / "source" / assignment
    if not folder.is_dir():
        raise UnknownAssignment(assignment, assignment_folders(root))
    return folder


def convert(nb, steps):
    """Apply nbgrader preprocessors in order; each is a small notebook-to-notebook step."""
    resources = {}
    for step in steps:
        nb, resources = step().preprocess(nb, resources)
    return nb


class PlaceholderLeft(UsageError):
    """The source notebook still holds text ``seqgrade new-exercise`` wrote for its author to replace."""

    def __init__(self, path: Path, found: list[tuple[str, str]]):
        cells = "; ".join(f"cell {cell}: {text!r}" for cell, text in found)
        super().__init__(
            f"{path} still holds the placeholder text seqgrade new-exercise wrote ({cells}): write the "
            f"exercise's own text there, or give --force to release it as it is"
        )
        self.path, self.found = path, found


def placeholders_left(nb) -> list[tuple[str, str]]:
    """(the cell, by its grade_id or id, the placeholder) for each placeholder of new-exercise still in ``nb``."""
    return [(grade_id(c) or c.get("id", "?"), text) for c in nb.cells for text in PLACEHOLDERS if text in c.source]


def release(
    assignment: str, out: str | Path, *, solutions: bool = False, root: Path | None = None, force: bool = False
) -> Path:
    """Write the student (or solution) version of ``assignment`` to ``out/assignment/``; return that folder.
    PlaceholderLeft when a notebook still holds new-exercise's placeholder text (unless ``force``)."""
    root = ASSIGNMENTS_ROOT if root is None else root
    src = source_dir(assignment, root)
    if not force:
        for path in sorted(src.glob("*.ipynb")):
            found = placeholders_left(nbformat.read(path, as_version=4))
            if found:
                raise PlaceholderLeft(path, found)
    dest = Path(out) / assignment
    try:
        ensure_writable_dir(dest)
    except OSError as exc:
        raise OutputNotWritable(out, exc.strerror or str(exc)) from None
    for path in sorted(src.iterdir()):
        if path.name.startswith(".") or path.name == "__pycache__":
            continue
        if path.suffix == ".ipynb":
            nb = convert(nbformat.read(path, as_version=4), STUDENT_STEPS)
            if solutions:
                given = {grade_id(c): checksum(c) for c in nb.cells if checksum(c)}
                nb = convert(nbformat.read(path, as_version=4), SOLUTION_STEPS)
                for cell in nb.cells:
                    if checksum(cell) and grade_id(cell) in given:
                        cell.metadata.nbgrader["checksum"] = given[grade_id(cell)]
            write_atomic(dest / path.name, nbformat.writes(nb) + "\n")
        elif path.is_file():
            shutil.copyfile(path, dest / path.name)
    return dest


def _inside(inner: Path, outer: Path) -> bool:
    inner, outer = inner.resolve(), outer.resolve()
    return inner == outer or outer in inner.parents


def release_all(
    out: str | Path, solutions_out: str | Path, *, root: Path | None = None, force: bool = False
) -> list[tuple[Path, Path]]:
    """The student version of every assignment under ``out`` and its solution version under
    ``solutions_out``; [(student folder, solution folder)] in course order. The two folders must not
    contain one another: the student folder is what students are given."""
    out, solutions_out, root = Path(out), Path(solutions_out), ASSIGNMENTS_ROOT if root is None else root
    if _inside(solutions_out, out) or _inside(out, solutions_out):
        raise UsageError(
            f"the solutions ({solutions_out}) and the student versions ({out}) need folders apart: "
            f"students are given the one, never the other"
        )
    if not force:  # every assignment checked before any is written
        for assignment in course_order(root):
            for path in sorted(source_dir(assignment, root).glob("*.ipynb")):
                found = placeholders_left(nbformat.read(path, as_version=4))
                if found:
                    raise PlaceholderLeft(path, found)
    return [
        (release(a, out, root=root, force=True), release(a, solutions_out, solutions=True, root=root, force=True))
        for a in course_order(root)
    ]


def course_order(root: Path | None = None) -> list[str]:
    """The course's assignments in the registry's order (the order it teaches them), then any other
    folder of ``source/``."""
    from grader.assignments.registry import ASSIGNMENTS

    found = assignment_folders(root)
    return [a for a in ASSIGNMENTS if a in found] + [a for a in found if a not in ASSIGNMENTS]
