"""Read a submitted notebook into the code that will run: a Submission, or InvalidNotebook with a reason.

Student definitions are found by name after running every code cell, so reordered, duplicated,
inserted or metadata-stripped cells still grade. The assignment's test cells (nbgrader test cells, or
cells that open with the self-check marker) are not run. IPython syntax (magics, ``!shell``) is
turned into calls on a stand-in ``get_ipython()`` that does nothing.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from .errors import InvalidNotebook

MAX_NOTEBOOK_BYTES = 200 * 2**20
SELF_CHECK_MARKER = "# Self-check"


@dataclass(frozen=True)
class Submission:
    path: str
    cells: tuple[tuple[int, str], ...]  # (index in the notebook, Python source) of the cells to run
    assignment: str | None  # as the notebook's metadata names it, if it does
    notes: tuple[str, ...] = ()


def _ipython_to_python():
    manager = []

    def transform(source: str) -> str:
        try:
            ast.parse(source)
            return source  # plain Python has no IPython syntax to turn into calls
        except (SyntaxError, ValueError):
            pass
        if not manager:  # imported for the first cell that needs it (0.1 s; most notebooks have none)
            from IPython.core.inputtransformer2 import TransformerManager

            manager.append(TransformerManager())
        try:
            return manager[0].transform_cell(source)
        except Exception:  # leave it; a SyntaxError will be recorded for the cell
            return source

    return transform


# A cell and its nbgrader metadata, read the one way every module reads them (as nbgrader.utils does). A notebook
# is JSON someone may have edited: a cell, its metadata or its "nbgrader" entry that is not an object reads as
# having none, and a source or grade id that is not text reads as "".


def cell_source(cell) -> str:
    """A cell's text: nbformat's list of lines joined, "" when it has none."""
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(source, list):
        source = "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def nbgrader_meta(cell) -> dict:
    """A cell's nbgrader metadata (``grade_id``, ``grade``, ``solution``, ``points``, ...), {} when it has none."""
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


def grade_id(cell) -> str:
    """The cell's nbgrader grade id, "" when it has none."""
    found = nbgrader_meta(cell).get("grade_id")
    return found if isinstance(found, str) else ""


def checksum(cell) -> str:
    """The checksum nbgrader stored for a graded or locked cell, "" when it has none."""
    found = nbgrader_meta(cell).get("checksum")
    return found if isinstance(found, str) else ""


def is_grade(cell) -> bool:
    """Whether nbgrader grades the cell (an autograded test cell, an answer or a solution worth points)."""
    return bool(nbgrader_meta(cell).get("grade"))


def is_solution(cell) -> bool:
    """Whether the cell is one the student writes in (a stub, an answer)."""
    return bool(nbgrader_meta(cell).get("solution"))


def points(cell) -> float | None:
    """The points nbgrader gives the cell, None when it gives none (or they are not a number)."""
    found = nbgrader_meta(cell).get("points")
    return float(found) if isinstance(found, (int, float)) and not isinstance(found, bool) else None


def is_test_cell(cell) -> bool:
    if is_grade(cell) and not is_solution(cell):
        return True
    first = cell_source(cell).lstrip().splitlines()[:1]
    return bool(first) and first[0].startswith(SELF_CHECK_MARKER)


def read_notebook(path: str | Path) -> tuple[dict, list[str]]:
    """Parse with clear reasons for each way a file can fail to be a notebook.

    Version 4 notebooks are used as the JSON they are (nbformat's validation costs ~2 s of imports per
    process and grading is lenient anyway); version 3 ones are converted by nbformat."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidNotebook(f"the file could not be read: {exc.strerror}") from None
    notes = []
    if not raw.strip():
        raise InvalidNotebook("the file is empty")
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise InvalidNotebook(
            f"the file is {len(raw) / 2**20:.0f} MB; notebooks over {MAX_NOTEBOOK_BYTES // 2**20} MB are not graded"
        )
    if b"\x00" in raw[:4096]:
        raise InvalidNotebook("the file is binary, not a notebook (.ipynb files are JSON text)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", errors="replace")
        notes.append(f"the file is not valid UTF-8 (first bad byte at offset {exc.start}); bad bytes were replaced")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        what = exc.msg.removesuffix(" at").removesuffix(
            ":"
        )  # "Unterminated string starting at" reads badly before "line"
        raise InvalidNotebook(
            f"the file is not valid JSON ({what}; line {exc.lineno}, column {exc.colno}); "
            f"it may be truncated or edited by hand"
        ) from None
    if not isinstance(data, dict) or "cells" not in data and "worksheets" not in data:
        raise InvalidNotebook("the file is JSON but not a Jupyter notebook (no 'cells')")
    major = data.get("nbformat")
    if major not in (3, 4):
        raise InvalidNotebook(f"notebook format version {major!r} is not supported (expected 4, or 3 to convert)")
    if major == 4:
        if not isinstance(data.get("cells"), list) or not all(isinstance(c, dict) for c in data["cells"]):
            raise InvalidNotebook("the notebook's 'cells' is not a list of cells")
        if not isinstance(data.get("metadata", {}), dict):
            raise InvalidNotebook("the notebook's 'metadata' is not an object")
        return data, notes
    try:
        import nbformat

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=4)
    except Exception as exc:
        raise InvalidNotebook(f"the notebook could not be read ({type(exc).__name__}: {str(exc)[:200]})") from None
    return json.loads(nbformat.writes(nb)), notes


def load_submission(path: str | Path) -> Submission:
    nb, notes = read_notebook(path)
    if not any(cell.get("cell_type") == "code" for cell in nb["cells"]):
        what = "no cells" if not nb["cells"] else "no code cells, only text"
        raise InvalidNotebook(
            f"the notebook has {what}: there is nothing to grade (was it saved before the work was copied into "
            f"it, or exported from another tool?)"
        )
    transform = _ipython_to_python()
    cells = []
    for index, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code" or is_test_cell(cell):
            continue
        cells.append((index, transform(cell_source(cell))))
    meta = nb.get("metadata", {}).get("seqgrade")
    assignment = meta.get("assignment") if isinstance(meta, dict) and isinstance(meta.get("assignment"), str) else None
    return Submission(path=str(path), cells=tuple(cells), assignment=assignment, notes=tuple(notes))


_DEF = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)|^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)", re.MULTILINE)


def defining_cells(cells) -> dict[str, list[int]]:
    """For each top-level name, the indices of the cells that define it (read as text, never run: a cell
    with a SyntaxError still says what it meant to define)."""
    found: dict[str, list[int]] = {}
    for index, source in cells:
        names: set[str] = set()
        try:
            for node in ast.parse(source).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(node.name)
                elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    names.update(t.id for t in targets if isinstance(t, ast.Name))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            names.update(a or b for a, b in _DEF.findall(source))
        for name in names:
            found.setdefault(name, []).append(index)
    return found
