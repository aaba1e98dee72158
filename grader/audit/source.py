"""A cell's source as the mutation operators see it: its AST, where each node sits in the text, and edits
that replace one span of the text, so a mutant is the solution with one small piece changed and the rest
of the cell byte for byte (its diff is the line it touched, not a reformatted cell)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterator

# Expressions whose text can stand anywhere an expression can, without parentheses.
_ATOMS = (
    ast.Name,
    ast.Constant,
    ast.Attribute,
    ast.Call,
    ast.Subscript,
    ast.List,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.DictComp,
    ast.SetComp,
    ast.GeneratorExp,
)
# Parents in which a replaced operand needs parentheses when it is not an atom.
_BINDING = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.Attribute, ast.Subscript, ast.Await, ast.Starred)


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` (character offsets in the cell) with ``new``."""

    start: int
    end: int
    new: str


class CellSource:
    """One solution cell: its text, its parsed tree with parents, and the lines the student writes
    (between ``### BEGIN SOLUTION`` and ``### END SOLUTION``), the only ones mutated."""

    def __init__(self, text: str, regions: tuple[tuple[int, int], ...]):
        self.text = text
        self.tree = ast.parse(text)
        self.regions = regions  # (first, last) 1-based line numbers, inclusive
        self._line_start = [0]
        for line in text.splitlines(keepends=True):
            self._line_start.append(self._line_start[-1] + len(line))
        self._lines = text.splitlines(keepends=True)
        self.parent: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node

    def offset(self, lineno: int, col: int) -> int:
        """Character offset of (line, UTF-8 byte column), as the ast module reports positions."""
        line = self._lines[lineno - 1] if lineno - 1 < len(self._lines) else ""
        return self._line_start[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def mutable(self, node: ast.AST) -> bool:
        """Whether the node lies wholly on the student's lines."""
        first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        return first is not None and any(lo <= first and last <= hi for lo, hi in self.regions)

    def nodes(self) -> Iterator[ast.AST]:
        return (node for node in ast.walk(self.tree) if self.mutable(node))

    def replace(self, node: ast.AST, new: str) -> Edit:
        """An edit replacing the node's text, in parentheses where the surrounding expression needs them."""
        start, end = self.span(node)
        return Edit(start, end, self.wrap(node, new))

    def wrap(self, node: ast.AST, new: str) -> str:
        if not isinstance(self.parent.get(node), _BINDING):
            return new
        try:
            root = ast.parse(new.strip(), mode="eval").body
        except SyntaxError:
            return new
        atom = isinstance(root, _ATOMS) and not (isinstance(root, ast.Constant) and str(root.value).startswith("-"))
        return new if atom else f"({new})"

    def between(self, left: ast.AST, right: ast.AST, token: str) -> Edit | None:
        """The edit span of the operator ``token`` written between two operands (brackets and spaces
        around it allowed), or None when the text between them is something else (a comment)."""
        start, end = self.span(left)[1], self.span(right)[0]
        gap = self.text[start:end]
        if "".join(ch for ch in gap if ch not in " \t\n\\()") != token.replace(" ", ""):
            return None
        found = re.search(r"\s+".join(map(re.escape, token.split())), gap)
        return Edit(start + found.start(), start + found.end(), token) if found else None

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset."""
        lo, hi = 0, len(self._line_start) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_start[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def indentation(self, node: ast.AST) -> str:
        line = self._lines[node.lineno - 1]
        return line[: len(line) - len(line.lstrip())]


def apply(text: str, edits: tuple[Edit, ...]) -> str:
    """The text with every edit made (they must not overlap)."""
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.new + text[edit.end :]
    return text
