"""Mechanical differences: an answer right but for its dtype, its container or a singleton axis.

When the first check that fails finds a difference of type, shape or dtype, the judge asks
:func:`explain` whether the results the probe saw (:class:`grader.checking.gate.Observation`) become the
reference's in structure by undoing mechanical steps only:

- a list or tuple of tensors stacked (``torch.stack``), a list or ndarray made a tensor, a tensor or a list
  of numbers an ndarray;
- singleton axes added or removed at the front or the back (``keepdim=True``, ``x[None]``, a (1, 1, T) output);
- floating-point tensors cast to the dtype of the call's floating-point inputs (torch's default dtype when
  there are none), as every reference here returns.

If they do, the check that found the difference keeps its charge and the exercise's later checks see
every result with those steps undone (:class:`Undone`): a list of states costs the shape check only,
float32 accumulators for float64 inputs cost the check that compares dtypes only. Results cast up from a
coarser dtype are then judged at that dtype's precision (:data:`grader.checking.compare.PRECISION`): undoing the
cast cannot give back the digits float32 arithmetic lost.

Precision is one such cause for functions and classes alike, whether the dtype shows it or not: a result,
state or intermediate computed in float32 for float64 inputs is charged once, by the first check that finds it
(kind "precision": a values check whose every case agrees with the reference at float32's precision, see
:class:`Slips`; for a class, its dtypes check), and every other check judges the answer at float32's precision.
A result shows it by its dtype or by its digits (:func:`coarser_result`).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np
import torch

from .base import KIND_HINTS, CheckFailed
from .calls import Reply
from .compare import PRECISION
from .gate import numbers

FLOAT_ORDER = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def target_dtype(args) -> torch.dtype:
    """The dtype a reference result takes for ``args``: that of the first floating-point tensor among them
    (in tuples, lists and dict values too), else torch's default dtype."""
    stack = list(args)
    while stack:
        a = stack.pop(0)
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            return a.dtype
        if isinstance(a, (list, tuple)):
            stack[:0] = list(a)
        elif isinstance(a, dict):
            stack[:0] = list(a.values())
    return torch.get_default_dtype()


def _axes(got: tuple, want: tuple) -> set[str]:
    """The ways to reach shape ``want`` from ``got`` by adding or removing singleton axes at one end."""
    ways = set()
    k = len(got) - len(want)
    if k > 0:
        if all(d == 1 for d in got[:k]) and got[k:] == want:
            ways.add(f"drop_lead:{k}")
        if all(d == 1 for d in got[len(got) - k :]) and got[: len(got) - k] == want:
            ways.add(f"drop_trail:{k}")
    elif k < 0:
        k = -k
        if all(d == 1 for d in want[:k]) and want[k:] == got:
            ways.add(f"add_lead:{k}")
        if all(d == 1 for d in want[len(want) - k :]) and want[: len(want) - k] == got:
            ways.add(f"add_trail:{k}")
    return ways


def _leaf(got, want, args) -> set[tuple] | None:
    """The sequences of steps that turn ``got`` into a value structured like ``want`` (a tensor or an
    ndarray); None when no mechanical steps do."""
    steps: list[str] = []
    if isinstance(want, torch.Tensor):
        if isinstance(got, (list, tuple)) and got and all(isinstance(g, torch.Tensor) for g in got):
            try:
                got, steps = torch.stack(list(got)), ["stack"]
            except RuntimeError:
                return None
        elif not isinstance(got, torch.Tensor):
            if isinstance(got, (np.ndarray, list, tuple)) and numbers(got) is not None and not isinstance(got, tuple):
                try:
                    got, steps = torch.as_tensor(np.asarray(got)), ["tensor"]
                except (TypeError, ValueError, RuntimeError):
                    return None
            else:
                return None
    elif isinstance(want, np.ndarray):
        if isinstance(got, torch.Tensor) and not got.is_complex():
            got, steps = got.detach().numpy(), ["array"]
        elif isinstance(got, list) and numbers(got) is not None:
            try:
                got, steps = np.asarray(got), ["array"]
            except ValueError:  # ragged
                return None
        elif not isinstance(got, np.ndarray):
            return None
    else:
        return None
    ways = {()}
    if tuple(got.shape) != tuple(want.shape):
        ways = {(w,) for w in _axes(tuple(got.shape), tuple(want.shape))}
        if not ways:
            return None
    if str(got.dtype).removeprefix("torch.") != str(want.dtype).removeprefix("torch."):
        if not (
            isinstance(want, torch.Tensor)
            and want.is_floating_point()
            and isinstance(got, torch.Tensor)
            and got.is_floating_point()
            and want.dtype == target_dtype(args)
        ):
            return None
        ways = {w + ("cast",) for w in ways}
    elif isinstance(want, torch.Tensor) and want.is_floating_point():
        ways |= {w + ("cast",) for w in ways}  # a cast to the inputs' dtype changes nothing here
    return {tuple(steps) + w for w in ways}


def _explain_one(got, want, args):
    """A tree of step sets ({steps, ...} for a leaf, a tuple of trees for a tuple answer), or None."""
    if isinstance(want, (tuple, list)) and not isinstance(want, torch.Tensor):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return None
        parts = tuple(_explain_one(g, w, args) for g, w in zip(got, want))
        return None if any(p is None for p in parts) else parts
    return _leaf(got, want, args)


def _merge(a, b):
    if isinstance(a, set) and isinstance(b, set):
        both = a & b
        return both or None
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        parts = tuple(_merge(x, y) for x, y in zip(a, b))
        return None if any(p is None for p in parts) else parts
    return None


def _pick(tree):
    return min(tree) if isinstance(tree, set) else tuple(_pick(t) for t in tree)


def _steps(tree) -> list[str]:
    if isinstance(tree, tuple) and tree and isinstance(tree[0], str):
        return list(tree)
    if isinstance(tree, tuple):
        return [s for t in tree for s in _steps(t)]
    return []


@dataclass(frozen=True)
class Fix:
    """Steps that undo a mechanical difference, per part of the answer (``steps``: a tuple of step names
    for a leaf, a tuple of such per part for a tuple answer), and the precision the answer was computed in
    when it was cast up (None otherwise)."""

    steps: tuple
    precision: torch.dtype | None = None

    @property
    def summary(self) -> str:
        return ", ".join(sorted(set(_steps(self.steps))))

    def undo(self, value, args):
        return _undo(value, self.steps, target_dtype(args))

    def redo(self, cotangent):
        """A cotangent shaped like the reference's result, reshaped like the student's result."""
        return _redo(cotangent, self.steps)


def _is_leaf(steps) -> bool:
    return not steps or isinstance(steps[0], str)


def _undo(value, steps, dtype):
    if not _is_leaf(steps):
        if not isinstance(value, (tuple, list)) or len(value) != len(steps):
            return value
        return type(value)(_undo(v, s, dtype) for v, s in zip(value, steps))
    for step in steps:
        name, _, k = step.partition(":")
        k = int(k or 0)
        try:
            if name == "stack" and isinstance(value, (list, tuple)) and all(isinstance(v, torch.Tensor) for v in value):
                value = torch.stack(list(value))
            elif name == "tensor" and isinstance(value, (np.ndarray, list)):
                value = torch.as_tensor(np.asarray(value))
            elif name == "array" and isinstance(value, (torch.Tensor, list)):
                value = value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
            elif name == "cast" and isinstance(value, torch.Tensor) and value.is_floating_point():
                value = value.to(dtype)
            elif isinstance(value, (torch.Tensor, np.ndarray)):
                shape = tuple(value.shape)
                if name == "drop_lead" and len(shape) >= k and all(d == 1 for d in shape[:k]):
                    value = value.reshape(shape[k:])
                elif name == "drop_trail" and len(shape) >= k and all(d == 1 for d in shape[len(shape) - k :]):
                    value = value.reshape(shape[: len(shape) - k])
                elif name == "add_lead":
                    value = value.reshape((1,) * k + shape)
                elif name == "add_trail":
                    value = value.reshape(shape + (1,) * k)
        except (RuntimeError, TypeError, ValueError):
            return value
    return value


def _redo(cot, steps):
    if not _is_leaf(steps):
        if not isinstance(cot, (tuple, list)) or len(cot) != len(steps):
            return cot
        return [_redo(c, s) if c is not None else None for c, s in zip(cot, steps)]
    for step in reversed(steps):
        if not isinstance(cot, torch.Tensor):
            return cot
        name, _, k = step.partition(":")
        k = int(k or 0)
        shape = tuple(cot.shape)
        if name == "stack":
            cot = list(cot.unbind(0))
        elif name == "drop_lead":
            cot = cot.reshape((1,) * k + shape)
        elif name == "drop_trail":
            cot = cot.reshape(shape + (1,) * k)
        elif name == "add_lead" and len(shape) >= k:
            cot = cot.reshape(shape[k:])
        elif name == "add_trail" and len(shape) >= k:
            cot = cot.reshape(shape[: len(shape) - k])
    return cot


def _coarsest(results: Sequence) -> torch.dtype | None:
    found = []
    stack = list(results)
    while stack:
        r = stack.pop()
        if isinstance(r, torch.Tensor) and r.is_floating_point():
            found.append(r.dtype)
        elif isinstance(r, (list, tuple)):
            stack.extend(r)
    return min(found, key=FLOAT_ORDER.index) if found and all(d in FLOAT_ORDER for d in found) else None


def explain(seen) -> Fix | None:
    """The mechanical steps that turn every result the probe saw (``seen``: cases, results, expected) into
    one structured exactly like the reference's; None when there are none, or nothing differs, or a
    difference is more than mechanical."""
    tree = None
    judged = [
        (r, w, a) for r, w, a, raised in zip(seen.results, seen.expected, seen.cases, seen.raised) if raised is None
    ]
    for got, want, args in judged:
        one = _explain_one(got, want, args)
        tree = one if tree is None else (_merge(tree, one) if one is not None else None)
        if tree is None:
            return None
    if tree is None:
        return None
    steps = _pick(tree)
    if not _steps(steps):
        return None
    precision = None
    if "cast" in _steps(steps):
        coarse = _coarsest([g for g, _, _ in judged])
        finest = max(
            (target_dtype(a) for _, _, a in judged), key=lambda d: FLOAT_ORDER.index(d) if d in FLOAT_ORDER else 0
        )
        if coarse is not None and FLOAT_ORDER.index(coarse) < FLOAT_ORDER.index(finest):
            precision = coarse
    return Fix(steps, precision)


class Undone:
    """The student's code as the exercise's later checks see it once a mechanical difference has been
    charged: every result of ``name`` with ``fix`` undone (and cotangents shaped for the student's result)."""

    def __init__(self, student, name: str, fix: Fix):
        self._student, self._name, self.fix = student, name, fix

    def __getattr__(self, attr):
        return getattr(self._student, attr)

    def call(self, name: str, args, **options) -> Reply:
        if name != self._name:
            return self._student.call(name, args, **options)
        if options.get("cotangent") is not None:
            options = {**options, "cotangent": self.fix.redo(options["cotangent"])}
        reply = self._student.call(name, args, **options)
        again = self.fix.undo(reply.again, args) if options.get("again") else reply.again
        return replace(reply, value=self.fix.undo(reply.value, args), again=again)


# --- precision: a result, state or intermediate computed in float32 for float64 inputs ----------------------
#
# One mechanical cause for functions and classes alike: the first check that finds it is charged (kind
# "precision"; for a class, its dtypes check), and every other check judges the answer at float32's precision.

PRECISION_KIND = "precision"
COARSER = {torch.float64: torch.float32}  # the slip recognised: float32 arithmetic on float64 inputs


@contextmanager
def judged_at(precision: torch.dtype | None):
    """Comparisons with a tolerance and finite differences inside allow ``precision``'s rounding (None: no change)."""
    token = PRECISION.set(precision) if precision is not None else None
    try:
        yield
    finally:
        if token is not None:
            PRECISION.reset(token)


def float32_digits(value) -> bool:
    """``value`` is a float64 tensor whose every entry is a float32 number, some of them not whole: it was computed
    in float32 and cast back (an entry computed in float64 is a float32 number with probability 2^-29, about 2e-9)."""
    if not isinstance(value, torch.Tensor) or value.dtype != torch.float64:
        return False
    v = value.detach()
    finite = v[torch.isfinite(v)]
    return bool(torch.equal(finite, finite.float().double())) and bool((finite != finite.round()).any())


def coarser_result(value, dtype: torch.dtype) -> torch.dtype | None:
    """The coarser precision a result meant to be of ``dtype`` was computed in, seen from the result alone:
    float32 for a float32 tensor, or a float64 one holding float32's digits, where float64 is meant."""
    coarse = COARSER.get(dtype)
    if coarse is None or not isinstance(value, torch.Tensor):
        return None
    return coarse if value.dtype == coarse or float32_digits(value) else None


PRECISION_NOTE = (
    "These values agree with the reference to float32's precision but not to float64's, the inputs' "
    "dtype: part of the computation runs in float32 (a tensor made with torch's default dtype, or a "
    ".float() copy), which loses the digits float64 keeps."
)


class Slips:
    """The cases of one check whose values differ from the reference's at the inputs' precision but agree at the
    next coarser one (float32 for float64 inputs). :meth:`judge` keeps the first such case instead of failing on
    it; :meth:`charge`, after every case has passed that way, fails the check once with kind "precision"."""

    def __init__(self, hint: str | None = KIND_HINTS[PRECISION_KIND]):
        self.first, self.hint = None, hint

    def judge(self, compare: Callable[[], None], dtype: torch.dtype) -> None:
        """Run ``compare()`` (it raises CheckFailed); a failure about values that disappears at the precision
        coarser than ``dtype`` is kept, not raised. Once a slip was charged (PRECISION set), nothing is retried."""
        try:
            compare()
        except CheckFailed as exc:
            coarse = COARSER.get(dtype)
            if exc.kind != "values" or coarse is None or PRECISION.get() is not None:
                raise
            with judged_at(coarse):
                try:
                    compare()
                except CheckFailed:
                    raise exc from None
            if self.first is None:
                self.first = exc

    def charge(self) -> None:
        if self.first is not None:
            raise CheckFailed(
                f"{self.first.message}\n{PRECISION_NOTE}", self.first.figure, kind=PRECISION_KIND, hint=self.hint
            )
