"""Mutants of an assignment's solution: every operator of :mod:`grader.audit.operators` applied to every node of
the student's lines (between ``### BEGIN SOLUTION`` and ``### END SOLUTION``) of each graded cell, one edit per
mutant. A mutant that does not compile, leaves the code's syntax tree unchanged or repeats another is dropped.

A mutant's id (``merge.arithmetic.3fa2c1``) is made of its cell, its operator and a digest of the line it
changes and how, so it stays the same when other lines of the solution change: triage recorded against it
(``audit.json``) lasts until the line itself changes.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import operator
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grader.assignments.registry import Assignment
from grader.notebook import grade_id

from .model import AuditError
from .operators import OPERATORS
from .source import CellSource, apply

_BEGIN, _END = "### BEGIN SOLUTION", "### END SOLUTION"
_MARKER_LINE = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*$")


@dataclass(frozen=True)
class Mutant:
    id: str
    exercise: str  # the grade_id of the cell it changes (an exercise of the assignment)
    operator: str
    before: str  # the changed line(s) of the solution, stripped
    after: str  # the same line(s) in the mutant
    source: str  # the whole cell as the mutant has it (solution markers removed, as released)

    @property
    def diff(self) -> str:
        """The change on one line: ``old  ->  new``."""
        return f"{self.before}  ->  {self.after}"

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "exercise": self.exercise,
            "operator": self.operator,
            "before": self.before,
            "after": self.after,
        }


@dataclass(frozen=True)
class SolutionCell:
    exercise: str
    text: str  # with the solution markers, as in the source notebook
    regions: tuple[tuple[int, int], ...]  # the student's lines, 1-based and inclusive

    @property
    def released(self) -> str:
        return without_markers(self.text)


def without_markers(text: str) -> str:
    """The cell as the solution release has it: the marker lines removed."""
    return "".join(line for line in text.splitlines(keepends=True) if not _MARKER_LINE.match(line.rstrip("\n")))


def _regions(text: str) -> tuple[tuple[int, int], ...]:
    found, start = [], None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() == _BEGIN:
            start = number + 1
        elif line.strip() == _END and start is not None:
            found.append((start, number - 1))
            start = None
    return tuple(found)


def solution_cells(assignment: Assignment, notebook: Path) -> tuple[SolutionCell, ...]:
    """The graded cells (functions, classes and answers) of the source notebook, each with its student's lines."""
    graded = {e.id for e in assignment.exercises if e.kind in ("function", "class", "answer")}
    cells = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        gid = grade_id(cell)
        if cell.cell_type == "code" and gid in graded:
            regions = _regions(cell.source)
            if not regions:
                raise AuditError(
                    f"{notebook.name}: the cell of {gid} has no ### BEGIN SOLUTION / "
                    f"### END SOLUTION lines, so the audit cannot tell the student's lines"
                )
            cells.append(SolutionCell(gid, cell.source, regions))
    return tuple(cells)


_FOLDED = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


class _Fold(ast.NodeTransformer):
    """Arithmetic on number literals computed (``-1 - 1`` is ``-2``), so two spellings of one mutant are one."""

    def visit_BinOp(self, node):
        return self._fold(self.generic_visit(node))

    def visit_UnaryOp(self, node):
        return self._fold(self.generic_visit(node))

    @staticmethod
    def _fold(node):
        operands = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.operand]
        compute = _FOLDED.get(type(node.op))
        if compute is None or not all(isinstance(o, ast.Constant) and type(o.value) in (int, float) for o in operands):
            return node
        try:
            return ast.Constant(compute(*(o.value for o in operands)))
        except (ArithmeticError, ValueError):
            return node


def _tree(text: str) -> str | None:
    try:
        return ast.dump(_Fold().visit(ast.parse(text)))
    except SyntaxError:
        return None


def _changed(old: str, new: str) -> tuple[str, str]:
    a, b = old.splitlines(), new.splitlines()
    before, after = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            before += [line.strip() for line in a[i1:i2]]
            after += [line.strip() for line in b[j1:j2]]
    return " / ".join(before), " / ".join(after)


def _inside_message(src: CellSource, node: ast.AST) -> bool:
    """Nodes of an f-string or of a raise statement: their mutants change only an error's text."""
    parent = src.parent.get(node)
    while parent is not None:
        if isinstance(parent, (ast.JoinedStr, ast.Raise)):
            return True
        parent = src.parent.get(parent)
    return False


def cell_mutants(cell: SolutionCell) -> list[Mutant]:
    src = CellSource(cell.text, cell.regions)
    original = cell.released
    seen = {_tree(original)}
    taken: dict[str, int] = {}
    found = []
    for node in src.nodes():
        if _inside_message(src, node):
            continue
        for name, (make, _) in OPERATORS.items():
            for edits in make(src, node):
                source = without_markers(apply(cell.text, edits))
                tree = _tree(source)
                if tree is None or tree in seen:
                    continue
                seen.add(tree)
                before, after = _changed(original, source)
                key = f"{before}\n{after}"
                occurrence = taken[key] = taken.get(key, -1) + 1
                digest = hashlib.sha256(f"{key}\n{occurrence}".encode()).hexdigest()[:6]
                found.append(Mutant(f"{cell.exercise}.{name}.{digest}", cell.exercise, name, before, after, source))
    return found


def make_mutants(assignment: Assignment, notebook: Path) -> tuple[Mutant, ...]:
    """Every mutant of the assignment's solution, cell by cell in notebook order."""
    return tuple(m for cell in solution_cells(assignment, notebook) for m in cell_mutants(cell))
