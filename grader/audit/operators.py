"""Mutation operators for this course's code: each takes one AST node of a solution cell and yields the
edits (``source.Edit``) that make one mutant each, a plausible mistake a student makes in numerical code.

The generic operators follow mutmut's choices (one replacement per arithmetic operator rather than every
pair, ``a += b`` left alone, comparisons moved across their boundary); the rest are the course's own:
softmax over the wrong axis, a transpose dropped or added, ``sqrt(d)`` to ``d``, ``-inf`` to ``-1e9``,
float32 and float16 instead of the dtype given, ``keepdim`` flipped, ``tril`` for ``triu``, a state not
reset, a loop bound shortened. ``OPERATORS`` lists them with the mistake each stands for.
The operators themselves are in :mod:`grader.audit.code_operators` (mistakes in plain Python) and
:mod:`grader.audit.tensor_operators` (mistakes in tensor code).
"""

from __future__ import annotations

import ast
from typing import Callable

from .code_operators import (
    Edits,
    arithmetic,
    branch,
    choice,
    comparison,
    constant,
    index,
    logic,
    loop_range,
    reset,
    statement,
    term,
)
from .source import CellSource
from .tensor_operators import axis, dtype, function, infinity, keepdim, sqrt, transpose

# name -> (operator, the mistake it stands for), in the order mutants are made: the course's own first, so a
# mutant two operators make is named after the more specific one
OPERATORS: dict[str, tuple[Callable[[CellSource, ast.AST], Edits], str]] = {
    "axis": (axis, "a dim or axis argument changed (a softmax or a sum over the wrong axis)"),
    "keepdim": (keepdim, "keepdim flipped, or added to a reduction"),
    "dtype": (dtype, "float32 or float16 instead of the dtype given (an accumulator or a state in low precision)"),
    "transpose": (transpose, "a transpose dropped (.T, .transpose(a, b)) or added to an operand of @"),
    "sqrt": (sqrt, "sqrt(x) or x ** 0.5 to x (dividing by d instead of sqrt(d))"),
    "infinity": (infinity, "-inf to -1e9 (inf to 1e9)"),
    "function": (
        function,
        "a function swapped for its twin: maximum/minimum, tril/triu, sin/cos, floor/ceil, "
        "sum/mean, softmax/log_softmax, tanh/sigmoid, zeros/ones, cat/stack, logsumexp/amax, ...",
    ),
    "reset": (reset, "a state not reset: initialised on the first pass of the outer loop only"),
    "range": (loop_range, "a loop bound shortened (range's stop less one, or less one step) or its start moved up"),
    "index": (index, "off by one in a slice bound or an index variable; [..., None] to [:, None]"),
    "term": (term, "a term or factor dropped: a + b to a or b, a - b to a, a * b to a or b, a / b to a"),
    "branch": (branch, "a special case skipped (if c: to if False:), a conditional expression to one of its arms"),
    "statement": (statement, "an update dropped: a statement in a loop, or a reassignment, becomes pass"),
    "choice": (choice, "a multiple-choice answer changed to another letter"),
    "arithmetic": (
        arithmetic,
        "an arithmetic operator swapped: + and -, * to /, / to * or //, // to /, ** to *, @ to *",
    ),
    "comparison": (
        comparison,
        "a comparison moved across its boundary (< and <=) or turned around (< and >); "
        "== and !=, is and is not, in and not in",
    ),
    "logic": (logic, "and and or swapped, not and ~ dropped (a mask inverted), True and False swapped"),
    "constant": (constant, "a number one more or one less (0 to 1, 2 to 3 or 1)"),
}
