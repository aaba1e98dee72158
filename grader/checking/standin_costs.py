"""What a stand-in's reply costs, estimated from the argument shapes alone (grader.checking.allowance bounds it
before the reply is computed). Each exercise's declaration names its estimate (``Exercise.cost``); a function
with nothing better to say declares ``generic_cost``. An exercise's own estimate lives in its assignment's package
(``grader/assignments/<id>/costs.py``), built from the pieces here: ``dim``, ``batch``, ``size``, ``args_size``,
``positive_int``, ``steps`` and ``scores_cost``.

Each estimate returns ``(elements, work)``: the most numbers the computation holds at once, and roughly
how many element operations it takes, a Python-level loop step counting ``STEP_WORK``. Estimates err
large: an honest request is far below every bound, and arguments the reference would refuse may be
estimated loosely, since it raises before it allocates anything for them.
"""

from __future__ import annotations

from .allowance import STEP_WORK, flat, numel, shape


def dim(value, axis: int, default: int = 1) -> int:
    """The length of an array argument's ``axis``, ``default`` when it is not an array or has too few axes."""
    s = shape(value)
    return s[axis] if s is not None and len(s) >= abs(axis) + (axis >= 0) else default


def positive_int(value, default: int = 1) -> int:
    """An integer argument (a size, a block length) when it is a positive int, else ``default``."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def batch(*values) -> int:
    """Elements of the broadcast batch dimensions (all but the last two axes) of the given arrays."""
    leading = [s[:-2] for s in (shape(v) for v in values) if s is not None]
    elements = 1
    for axis in range(max((len(s) for s in leading), default=0)):
        elements *= max((s[len(s) - 1 - axis] for s in leading if len(s) > axis), default=1)
    return elements


def size(value) -> int:
    """Elements of an argument: an array's, a list's, string's or dict's length, 1 for a scalar."""
    if isinstance(value, (list, tuple, str, dict)):
        return max(len(value), 1)
    return numel(value)


def args_size(args) -> int:
    """Elements of all the arguments together (nested lists and tuples included)."""
    return sum(size(a) for a in flat(args))


def _longest(args) -> int:
    return max((max(s) for s in (shape(a) for a in flat(args)) if s), default=1)


def _ints(args) -> int:
    product = 1
    for a in args:
        product *= positive_int(a)
    return product


def steps(n: int, per_step: float) -> float:
    """Work of ``n`` Python-level loop steps that each do ``per_step`` element operations."""
    return n * (per_step + STEP_WORK)


def scores_cost(q, K, V, *extra) -> tuple[int, float]:
    """Attention of queries ``q`` over keys ``K``: the (batch, Nq, Nk) scores dominate."""
    rows = dim(q, -2) if len(shape(q) or ()) >= 2 else 1
    scores = batch(q, K, V, *extra) * rows * dim(K, -2)
    return 3 * scores + numel(q) + numel(K) + numel(V), float(scores * (dim(q, -1) + dim(V, -1) + 4))


def generic_cost(args) -> tuple[int, float]:
    """For a function with no estimate of its own: its arguments, the square of their longest axis (any
    pairwise interaction, such as attention scores), or the product of its integer arguments (a size it
    is asked to build), whichever is largest."""
    n = max(args_size(args), _longest(args) ** 2, _ints(args))
    return n, 8.0 * n


def constant_cost(args) -> tuple[int, float]:
    """Arithmetic on a few integers (parameter counts, byte counts)."""
    return args_size(args), 100.0
