"""Mutation operators for mistakes in plain Python: the generic ones, after mutmut's choices (one replacement per
arithmetic operator rather than every pair, ``a += b`` left alone, comparisons moved across their boundary), and a
term dropped, an index off by one, a loop bound shortened, a special case skipped, an update dropped, a state not
reset, a multiple-choice answer changed. :mod:`grader.audit.operators` lists them.
"""

from __future__ import annotations

import ast
from typing import Iterator

from .source import CellSource, Edit

Edits = Iterator[tuple[Edit, ...]]

_ARITHMETIC = {
    ast.Add: ("+", ["-"]),
    ast.Sub: ("-", ["+"]),
    ast.Mult: ("*", ["/"]),
    ast.Div: ("/", ["*", "//"]),
    ast.FloorDiv: ("//", ["/"]),
    ast.Mod: ("%", ["/"]),
    ast.Pow: ("**", ["*"]),
    ast.MatMult: ("@", ["*"]),
}
_COMPARISON = {
    ast.Lt: ("<", ["<=", ">"]),
    ast.LtE: ("<=", ["<", ">="]),
    ast.Gt: (">", [">=", "<"]),
    ast.GtE: (">=", [">", "<="]),
    ast.Eq: ("==", ["!="]),
    ast.NotEq: ("!=", ["=="]),
    ast.Is: ("is", ["is not"]),
    ast.IsNot: ("is not", ["is"]),
    ast.In: ("in", ["not in"]),
    ast.NotIn: ("not in", ["in"]),
}


def _name(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def arithmetic(src: CellSource, node: ast.AST) -> Edits:
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        token, others = _ARITHMETIC[type(node.op)]
        edit = src.between(node.left, node.right, token)
        for other in others if edit else ():
            yield (Edit(edit.start, edit.end, other),)


def comparison(src: CellSource, node: ast.AST) -> Edits:
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            token, others = _COMPARISON[type(op)]
            edit = src.between(operands[i], operands[i + 1], token)
            for other in others if edit else ():
                yield (Edit(edit.start, edit.end, other),)


def logic(src: CellSource, node: ast.AST) -> Edits:
    if isinstance(node, ast.BoolOp):
        token, other = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        for left, right in zip(node.values, node.values[1:]):
            edit = src.between(left, right, token)
            if edit:
                yield (Edit(edit.start, edit.end, other),)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.Invert)):
        yield (src.replace(node, src.segment(node.operand)),)
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield (src.replace(node, str(not node.value)),)


def constant(src: CellSource, node: ast.AST) -> Edits:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value = node.value
        changed = [value + 1] + ([value - 1] if type(value) is int and value > 0 else [])
        for new in changed:
            yield (src.replace(node, repr(new)),)


def term(src: CellSource, node: ast.AST) -> Edits:
    """One term or factor dropped (a + b to a or b, a - b to a, a * b to a or b, a / b to a)."""
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        return
    if isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant):
        return  # 2 * 3: the constant operator covers it
    kept = [node.left] if isinstance(node.op, (ast.Sub, ast.Div)) else [node.left, node.right]
    for operand in kept:
        yield (src.replace(node, src.segment(operand)),)


def index(src: CellSource, node: ast.AST) -> Edits:
    """Off by one in a slice bound or an index variable; ``...`` of a subscript to ``:``."""
    if isinstance(node, ast.Slice) and node.step is None:
        if node.lower is not None:
            yield (src.replace(node.lower, f"{src.segment(node.lower)} + 1"),)
        if node.upper is not None:
            for delta in (" - 1", " + 1"):
                yield (src.replace(node.upper, f"{src.segment(node.upper)}{delta}"),)
    elif isinstance(node, ast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            if isinstance(part, ast.Name):
                for delta in (" + 1", " - 1"):
                    yield (src.replace(part, f"{part.id}{delta}"),)
            elif isinstance(part, ast.Constant) and part.value is Ellipsis and len(parts) > 1:
                yield (src.replace(part, ":"),)


def loop_range(src: CellSource, node: ast.AST) -> Edits:
    """A loop bound shortened (range's stop less one, or less one step: the last block dropped)."""
    if not (isinstance(node, ast.Call) and _name(node.func) == "range" and 1 <= len(node.args) <= 3):
        return
    stop = node.args[0] if len(node.args) == 1 else node.args[1]
    yield (src.replace(stop, f"{src.segment(stop)} - 1"),)
    if len(node.args) == 3:
        yield (src.replace(stop, f"{src.segment(stop)} - {src.segment(node.args[2])}"),)
    if len(node.args) >= 2:
        yield (src.replace(node.args[0], f"{src.segment(node.args[0])} + 1"),)


def branch(src: CellSource, node: ast.AST) -> Edits:
    """A special case skipped: ``if c:`` without else to ``if False:``; a conditional expression to one arm."""
    if isinstance(node, ast.If) and not node.orelse:
        yield (src.replace(node.test, "False"),)
    elif isinstance(node, ast.IfExp):
        for arm in (node.body, node.orelse):
            yield (src.replace(node, src.segment(arm)),)


def _bound_before(src: CellSource, node: ast.stmt, name: str) -> bool:
    """Whether ``name`` is a parameter of the enclosing function or assigned by an earlier statement."""
    scope = src.parent.get(node)
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.Module)):
        scope = src.parent.get(scope)
    if isinstance(scope, ast.FunctionDef) and name in {a.arg for a in scope.args.args + scope.args.kwonlyargs}:
        return True
    return any(
        isinstance(n, ast.Name)
        and n.id == name
        and isinstance(n.ctx, ast.Store)
        and (n.lineno, n.col_offset) < (node.lineno, node.col_offset)
        for n in ast.walk(scope or src.tree)
    )


def _in_loop(src: CellSource, node: ast.AST) -> ast.AST | None:
    parent = src.parent.get(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.Module)):
        if isinstance(parent, (ast.For, ast.While)):
            return parent
        parent = src.parent.get(parent)
    return None


def statement(src: CellSource, node: ast.AST) -> Edits:
    """An update dropped: a statement in a loop, or a reassignment of a name already bound, becomes pass."""
    if (
        not isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr))
        or isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
    ):
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    if _in_loop(src, node) is not None or (
        names and len(names) == len(targets) and all(_bound_before(src, node, n) for n in names)
    ):
        yield (src.replace(node, "pass"),)


def reset(src: CellSource, node: ast.AST) -> Edits:
    """A state not reset: an initialisation in an outer loop over range(...), before an inner loop, done on the
    outer loop's first iteration only."""
    if not (
        isinstance(node, ast.For)
        and isinstance(node.target, ast.Name)
        and isinstance(node.iter, ast.Call)
        and _name(node.iter.func) == "range"
        and node.iter.args
    ):
        return
    first = src.segment(node.iter.args[0]) if len(node.iter.args) > 1 else "0"
    inner = next((i for i, s in enumerate(node.body) if isinstance(s, (ast.For, ast.While))), None)
    for stmt in node.body[: inner or 0]:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
            and src.mutable(stmt)
        ):
            name = stmt.targets[0].id
            yield (src.replace(stmt.value, f"{src.segment(stmt.value)} if {node.target.id} == {first} else {name}"),)


def choice(src: CellSource, node: ast.AST) -> Edits:
    """A multiple-choice answer (one capital letter) changed to each other letter of A-D."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) == 1 and node.value in "ABCD":
        for letter in "ABCD":
            if letter != node.value:
                yield (src.replace(node, repr(letter)),)
