"""Mutation operators for mistakes in tensor code: softmax or a sum over the wrong axis, a transpose dropped or added,
``sqrt(d)`` to ``d``, ``-inf`` to ``-1e9``, float32 and float16 instead of the dtype given, ``keepdim`` flipped, a
function swapped for its twin (``tril`` for ``triu``, ...). :mod:`grader.audit.operators` lists them.
"""

from __future__ import annotations

import ast

from .code_operators import Edits, _name
from .source import CellSource, Edit

_TWINS = {
    "maximum": "minimum",
    "minimum": "maximum",
    "max": "min",
    "min": "max",
    "amax": "amin",
    "amin": "amax",
    "argmax": "argmin",
    "argmin": "argmax",
    "tril": "triu",
    "triu": "tril",
    "sin": "cos",
    "cos": "sin",
    "floor": "ceil",
    "ceil": "floor",
    "sum": "mean",
    "mean": "sum",
    "softmax": "log_softmax",
    "log_softmax": "softmax",
    "tanh": "sigmoid",
    "sigmoid": "tanh",
    "zeros": "ones",
    "ones": "zeros",
    "zeros_like": "ones_like",
    "ones_like": "zeros_like",
    "cat": "stack",
    "stack": "cat",
    "exp": "exp2",
    "logsumexp": "amax",
    "relu": "abs",
}
# Reductions and other calls whose first positional argument (for a method) or second (for torch.f(x, dim))
# is an axis.
_AXIS_CALLS = {
    "softmax",
    "log_softmax",
    "logsumexp",
    "sum",
    "mean",
    "max",
    "min",
    "amax",
    "amin",
    "cumsum",
    "argmax",
    "argmin",
    "unsqueeze",
    "squeeze",
    "cat",
    "stack",
    "var",
    "std",
    "norm",
    "prod",
    "flip",
    "split",
}
_KEEPDIM_CALLS = {"sum", "mean", "max", "min", "amax", "amin", "logsumexp", "var", "std", "norm", "prod"}
_SQRT = {"sqrt"}
_INF_NAMES = {"inf"}


def _int(node: ast.AST) -> int | None:
    """The value of an integer literal (with its sign), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def infinity(src: CellSource, node: ast.AST) -> Edits:
    """float("-inf") and math.inf (torch.inf, np.inf) to a large finite number."""
    sign = None
    if (
        isinstance(node, ast.Call)
        and _name(node.func) == "float"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
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
    elif (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Pow)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 0.5
    ):
        yield (src.replace(node, src.segment(node.left)),)


def axis(src: CellSource, node: ast.AST) -> Edits:
    """A dim/axis argument changed: a reduction or softmax over the wrong axis."""
    if not isinstance(node, ast.Call):
        return
    targets = [k.value for k in node.keywords if k.arg in ("dim", "axis")]
    name = _name(node.func)
    if not targets and name in _AXIS_CALLS:
        method = isinstance(node.func, ast.Attribute) and not (
            isinstance(node.func.value, ast.Name) and node.func.value.id in ("torch", "np", "numpy", "F")
        )
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
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("transpose", "swapaxes")
        and len(node.args) == 2
    ):
        yield (src.replace(node, src.segment(node.func.value)),)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        for operand in (node.left, node.right):
            if (
                isinstance(operand, (ast.Name, ast.Subscript, ast.Call))
                or isinstance(operand, ast.Attribute)
                and operand.attr not in ("T", "mT")
            ):
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
