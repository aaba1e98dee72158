"""Student and solution versions of an assignment, made by nbgrader's own preprocessors in memory.

No gradebook database is created and nothing is written inside ``assignments/``: the source notebook
is read, run through nbgrader's steps as a pipeline, and written (atomically) to the output folder
with the assignment's other files (the self-check helper).
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
from nbgrader.preprocessors import (CheckCellMetadata, ClearHiddenTests, ClearMarkScheme, ClearOutput,
                                    ClearSolutions, ComputeChecksums, LockCells)

from .errors import OutputNotWritable, UnknownAssignment
from .fsutil import ensure_writable_dir, write_atomic

ASSIGNMENTS_ROOT = Path(__file__).resolve().parents[1] / "assignments"
STUDENT_STEPS = (CheckCellMetadata, LockCells, ClearSolutions, ClearOutput, ClearHiddenTests, ClearMarkScheme, ComputeChecksums)
SOLUTION_STEPS = (CheckCellMetadata, LockCells, ClearOutput, ClearHiddenTests, ClearMarkScheme, ComputeChecksums)
_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


def source_dir(assignment: str, root: Path = ASSIGNMENTS_ROOT) -> Path:
    folder = root / "source" / assignment
    if not folder.is_dir():
        known = sorted(p.name for p in (root / "source").iterdir() if p.is_dir()) if (root / "source").is_dir() else []
        raise UnknownAssignment(assignment, known)
    return folder


def _strip_solution_markers(nb):
    for cell in nb.cells:
        cell.source = _MARKER.sub("", cell.source)
    return nb


def convert(nb, steps):
    """Apply nbgrader preprocessors in order; each is a small notebook-to-notebook step."""
    resources = {}
    for step in steps:
        nb, resources = step().preprocess(nb, resources)
    return nb


def release(assignment: str, out: str | Path, *, solutions: bool = False, root: Path = ASSIGNMENTS_ROOT) -> Path:
    """Write the student (or solution) version of ``assignment`` to ``out/assignment/``; return that folder."""
    src = source_dir(assignment, root)
    dest = Path(out) / assignment
    try:
        ensure_writable_dir(dest)
    except OSError as exc:
        raise OutputNotWritable(out, exc.strerror or str(exc)) from None
    for path in sorted(src.iterdir()):
        if path.name.startswith(".") or path.name == "__pycache__":
            continue
        if path.suffix == ".ipynb":
            nb = nbformat.read(path, as_version=4)
            nb = convert(nb, SOLUTION_STEPS if solutions else STUDENT_STEPS)
            if solutions:
                nb = _strip_solution_markers(nb)
            write_atomic(dest / path.name, nbformat.writes(nb) + "\n")
        elif path.is_file():
            shutil.copyfile(path, dest / path.name)
    return dest
