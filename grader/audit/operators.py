"""Mutation operators for this course's code: each takes one AST node of a solution cell and yields the
edits (``source.Edit``) that make one mutant each, a plausible mistake a student makes in numerical code.

The generic operators follow mutmut's choices (one replacement per arithmetic operator rather than every
pair, ``a += b`` left alone, comparisons moved across their boundary); the rest are the course's own:
softmax over the wrong axis, a transpose dropped or added, ``sqrt(d)`` to ``d``, ``-inf`` to ``-1e9``,
float32 and float16 instead of the dtype given, ``keepdim`` flipped, ``tril`` for ``triu``, a state not
reset, a loop bound shortened. ``OPERATORS`` lists them with the mistake each stands for.
"""
from __future__ import annotations

import ast
from typing import Callable, Iterator

from .source import CellSource, Edit

Edits = Iterator[tuple[Edit, ...]]

_ARITHMETIC = {ast.Add: ("+", ["-"]), ast.Sub: ("-", ["+"]), ast.Mult: ("*", ["/"]), ast.Div: ("/", ["*", "//"]),
               ast.FloorDiv: ("//", ["/"]), ast.Mod: ("%", ["/"]), ast.Pow: ("**", ["*"]), ast.MatMult: ("@", ["*"])}
_COMPARISON = {ast.Lt: ("<", ["<=", ">"]), ast.LtE: ("<=", ["<", ">="]), ast.Gt: (">", [">=", "<"]),
               ast.GtE: (">=", [">", "<="]), ast.Eq: ("==", ["!="]), ast.NotEq: ("!=", ["=="]),
               ast.Is: ("is", ["is not"]), ast.IsNot: ("is not", ["is"]), ast.In: ("in", ["not in"]),
               ast.NotIn: ("not in", ["in"])}
_TWINS = {"maximum": "minimum", "minimum": "maximum", "max": "min", "min": "max", "amax": "amin", "amin": "amax",
          "argmax": "argmin", "argmin": "argmax", "tril": "triu", "triu": "tril", "sin": "cos", "cos": "sin",
          "floor": "ceil", "ceil": "floor", "sum": "mean", "mean": "sum", "softmax": "log_softmax",
          "log_softmax": "softmax", "tanh": "sigmoid", "sigmoid": "tanh", "zeros": "ones", "ones": "zeros",
          "zeros_like": "ones_like", "ones_like": "zeros_like", "cat": "stack", "stack": "cat", "exp": "exp2",
          "logsumexp": "amax", "relu": "abs"}
# Reductions and other calls whose first positional argument (for a method) or second (for torch.f(x, dim))
# is an axis.
_AXIS_CALLS = {"softmax", "log_softmax", "logsumexp", "sum", "mean", "max", "min", "amax", "amin", "cumsum", "argmax",
               "argmin", "unsqueeze", "squeeze", "cat", "stack", "var", "std", "norm", "prod", "flip", "split"}
_KEEPDIM_CALLS = {"sum", "mean", "max", "min", "amax", "amin", "logsumexp", "var", "std", "norm", "prod"}
_SQRT = {"sqrt"}
_INF_NAMES = {"inf"}


def _name(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _int(node: ast.AST) -> int | None:
    """The value of an integer literal (with its sign), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


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


def infinity(src: CellSource, node: ast.AST) -> Edits:
    """float("-inf") and math.inf (torch.inf, np.inf) to a large finite number."""
    sign = None
    if isinstance(node, ast.Call) and _name(node.func) == "float" and len(node.args) == 1 \
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        text = node.args[0].value.strip().lower()
        sign = "-" if text in ("-inf", "-infinity") else "" if text in ("inf", "+inf", "infinity") else None
    elif isinstance(node, ast.Attribute) and node.attr in _INF_NAMES:
        parent = src.parent.get(node)
        negated = isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub)
        if negated:
            yield (src.replace(parent, "-1e9"),)
            return
        sign = ""
    if sign is not None:
        yield (src.replace(node, f"{sign}1e9"),)


def sqrt(src: CellSource, node: ast.AST) -> Edits:
    """sqrt(x) and x ** 0.5 to x: scaling by d instead of sqrt(d)."""
    if isinstance(node, ast.Call) and _name(node.func) in _SQRT and len(node.args) == 1:
        yield (src.replace(node, src.segment(node.args[0])),)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) \
            and node.right.value == 0.5:
        yield (src.replace(node, src.segment(node.left)),)


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


def axis(src: CellSource, node: ast.AST) -> Edits:
    """A dim/axis argument changed: a reduction or softmax over the wrong axis."""
    if not isinstance(node, ast.Call):
        return
    targets = [k.value for k in node.keywords if k.arg in ("dim", "axis")]
    name = _name(node.func)
    if not targets and name in _AXIS_CALLS:
        method = isinstance(node.func, ast.Attribute) and not (
            isinstance(node.func.value, ast.Name) and node.func.value.id in ("torch", "np", "numpy", "F"))
        position = 0 if method and name not in ("split",) else 1
        if len(node.args) > position:
            targets.append(node.args[position])
    for target in targets:
        value = _int(target)
        if value is None:
            continue
        for other in {-1: (-2, 0), -2: (-1,), 0: (1, -1), 1: (0,)}.get(value, (value - 1, value + 1)):
            yield (src.replace(target, str(other)),)


def transpose(src: CellSource, node: ast.AST) -> Edits:
    """A transpose dropped (.T, .mT, .transpose(a, b)) or added to an operand of @."""
    if isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
        yield (src.replace(node, src.segment(node.value)),)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("transpose", "swapaxes") \
            and len(node.args) == 2:
        yield (src.replace(node, src.segment(node.func.value)),)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        for operand in (node.left, node.right):
            if isinstance(operand, (ast.Name, ast.Subscript, ast.Call)) or \
                    isinstance(operand, ast.Attribute) and operand.attr not in ("T", "mT"):
                yield (src.replace(operand, f"{src.segment(operand)}.transpose(-2, -1)"),)


def keepdim(src: CellSource, node: ast.AST) -> Edits:
    """keepdim flipped, or added to a reduction over an axis that drops it."""
    if not isinstance(node, ast.Call):
        return
    flags = [k for k in node.keywords if k.arg in ("keepdim", "keepdims")]
    for flag in flags:
        if isinstance(flag.value, ast.Constant) and type(flag.value.value) is bool:
            yield (src.replace(flag.value, str(not flag.value.value)),)
    if not flags and _name(node.func) in _KEEPDIM_CALLS and any(k.arg in ("dim", "axis") for k in node.keywords):
        end = src.span(node)[1] - 1  # before the closing bracket
        word = "keepdims" if any(k.arg == "axis" for k in node.keywords) else "keepdim"
        yield (Edit(end, end, f", {word}=True"),)


def _numpy(node: ast.AST) -> bool:
    text = ast.unparse(node)
    return text.startswith(("np.", "numpy.")) or ".astype" in text


def dtype(src: CellSource, node: ast.AST) -> Edits:
    """float32 or float16 instead of the dtype given (an accumulator or a state in lower precision)."""
    if not isinstance(node, ast.Call):
        return
    lib = "np" if _numpy(node.func) else "torch"
    given = [k.value for k in node.keywords if k.arg == "dtype"]
    if _name(node.func) in ("astype", "to") and len(node.args) == 1 and not node.keywords:
        given.append(node.args[0])
    for value in given:
        for low in ("float32", "float16"):
            if ast.unparse(value) != f"{lib}.{low}":
                yield (src.replace(value, f"{lib}.{low}"),)


def function(src: CellSource, node: ast.AST) -> Edits:
    """A function swapped for its twin (maximum/minimum, tril/triu, sin/cos, floor/ceil, sum/mean, ...)."""
    if not isinstance(node, ast.Call):
        return
    name = _name(node.func)
    if name not in _TWINS or isinstance(node.func, ast.Name) and name not in ("max", "min"):
        return
    end = src.span(node.func)[1]
    yield (Edit(end - len(name), end, _TWINS[name]),)


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
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               and (n.lineno, n.col_offset) < (node.lineno, node.col_offset) for n in ast.walk(scope or src.tree))


def _in_loop(src: CellSource, node: ast.AST) -> ast.AST | None:
    parent = src.parent.get(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.Module)):
        if isinstance(parent, (ast.For, ast.While)):
            return parent
        parent = src.parent.get(parent)
    return None


def statement(src: CellSource, node: ast.AST) -> Edits:
    """An update dropped: a statement in a loop, or a reassignment of a name already bound, becomes pass."""
    if not isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr)) or isinstance(node, ast.Expr) \
            and isinstance(node.value, ast.Constant):
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    if _in_loop(src, node) is not None or (names and len(names) == len(targets)
                                          and all(_bound_before(src, node, n) for n in names)):
        yield (src.replace(node, "pass"),)


def reset(src: CellSource, node: ast.AST) -> Edits:
    """A state not reset: an initialisation in an outer loop over range(...), before an inner loop, done on the
    outer loop's first iteration only."""
    if not (isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Call)
            and _name(node.iter.func) == "range" and node.iter.args):
        return
    first = src.segment(node.iter.args[0]) if len(node.iter.args) > 1 else "0"
    inner = next((i for i, s in enumerate(node.body) if isinstance(s, (ast.For, ast.While))), None)
    for stmt in node.body[:inner or 0]:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.Call) and src.mutable(stmt):
            name = stmt.targets[0].id
            yield (src.replace(stmt.value, f"{src.segment(stmt.value)} if {node.target.id} == {first} else {name}"),)


def choice(src: CellSource, node: ast.AST) -> Edits:
    """A multiple-choice answer (one capital letter) changed to each other letter of A-D."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) == 1 and node.value in "ABCD":
        for letter in "ABCD":
            if letter != node.value:
                yield (src.replace(node, repr(letter)),)


# name -> (operator, the mistake it stands for), in the order mutants are made: the course's own first, so a
# mutant two operators make is named after the more specific one
OPERATORS: dict[str, tuple[Callable[[CellSource, ast.AST], Edits], str]] = {
    "axis": (axis, "a dim or axis argument changed (a softmax or a sum over the wrong axis)"),
    "keepdim": (keepdim, "keepdim flipped, or added to a reduction"),
    "dtype": (dtype, "float32 or float16 instead of the dtype given (an accumulator or a state in low precision)"),
    "transpose": (transpose, "a transpose dropped (.T, .transpose(a, b)) or added to an operand of @"),
    "sqrt": (sqrt, "sqrt(x) or x ** 0.5 to x (dividing by d instead of sqrt(d))"),
    "infinity": (infinity, "-inf to -1e9 (inf to 1e9)"),
    "function": (function, "a function swapped for its twin: maximum/minimum, tril/triu, sin/cos, floor/ceil, "
                           "sum/mean, softmax/log_softmax, tanh/sigmoid, zeros/ones, cat/stack, logsumexp/amax, ..."),
    "reset": (reset, "a state not reset: initialised on the first pass of the outer loop only"),
    "range": (loop_range, "a loop bound shortened (range's stop less one, or less one step) or its start moved up"),
    "index": (index, "off by one in a slice bound or an index variable; [..., None] to [:, None]"),
    "term": (term, "a term or factor dropped: a + b to a or b, a - b to a, a * b to a or b, a / b to a"),
    "branch": (branch, "a special case skipped (if c: to if False:), a conditional expression to one of its arms"),
    "statement": (statement, "an update dropped: a statement in a loop, or a reassignment, becomes pass"),
    "choice": (choice, "a multiple-choice answer changed to another letter"),
    "arithmetic": (arithmetic, "an arithmetic operator swapped: + and -, * to /, / to * or //, // to /, ** to *, @ to *"),
    "comparison": (comparison, "a comparison moved across its boundary (< and <=) or turned around (< and >); "
                               "== and !=, is and is not, in and not in"),
    "logic": (logic, "and and or swapped, not and ~ dropped (a mask inverted), True and False swapped"),
    "constant": (constant, "a number one more or one less (0 to 1, 2 to 3 or 1)"),
}
