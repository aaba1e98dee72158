"""The gate that keeps trivial code from every check: does the student's function do real work?

A :class:`Probe` (declared beside an exercise's checks) draws a few cases the way the exercise's own
checks draw theirs, calls the student's function and the reference on each, and finds the function
*degenerate* when, where the correct answers differ, it

- raises on every case,
- returns only zeros (or empty containers), the same value for every case, or one of its inputs, or
- ignores a main input: for some declared input, the result never changes when that input changes on
  a case where the correct answer does (the input is moved on each case in turn until the answer
  moves; a case where the answer does not depend on it, such as one key for the queries, says nothing).

The judge then pays no check of the exercise (docs/architecture.md, "Checks, and grades a TA can
defend"). What the probe saw (the cases, the student's results and the reference's) also tells the
judge whether a difference in type, shape or dtype is mechanical (:mod:`grader.checking.mechanical`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
import torch

from grader.jail.codec import Unsupported

from .base import StudentErrorAt, call, drawn_cases
from .calls import StudentCode
from .compare import describe
from .strategies import gaussian


class Degenerate(str):
    """Why a function does no real work; ``status`` is the status its checks get ("error" when it raised)."""

    def __new__(cls, text: str, status: str = "failed"):
        self = super().__new__(cls, text)
        self.status = status
        return self


def numbers(value) -> np.ndarray | None:
    """All the numbers in a returned value, flattened; None when it holds anything else."""
    if isinstance(value, torch.Tensor):
        return value.detach().to(torch.float64).numpy().ravel() if not value.is_complex() else None
    if isinstance(value, (np.ndarray, np.generic)) and np.asarray(value).dtype.kind in "biuf":
        return np.asarray(value, dtype=np.float64).ravel()
    if isinstance(value, (bool, int, float)):
        try:
            return np.array([float(value)])
        except OverflowError:  # an int beyond float's range is a number, just not a float
            return np.array([np.inf])
    if isinstance(value, (list, tuple)) and not isinstance(value, Unsupported):
        parts = [numbers(v) for v in value]
        return None if any(p is None for p in parts) or not parts else np.concatenate(parts)
    return None


def _blank(value) -> bool:
    """Only zeros, or an empty container."""
    if isinstance(value, (dict, list, tuple, str)) and len(value) == 0:
        return True
    found = numbers(value)
    return found is not None and not np.any(found)


def same(a, b) -> bool:
    """``a`` and ``b`` are the same answer exactly: same types, shapes, dtypes and values (NaN equals NaN)."""
    if (
        isinstance(a, torch.Tensor)
        or isinstance(b, torch.Tensor)
        or isinstance(a, np.ndarray)
        or isinstance(b, np.ndarray)
    ):
        if type(a) is not type(b) or tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
            return False
        x, y = numbers(a), numbers(b)
        if x is None or y is None:
            return bool(np.array_equal(np.asarray(a), np.asarray(b)))
        return bool(np.all((x == y) | (np.isnan(x) & np.isnan(y))))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # an object whose comparison fails is not known to be the same
        return False


def moved(value, salt: int):
    """``value`` changed enough that any function of it that looks at it notices: floating tensors and
    arrays shifted by 0.5 or more, bool tensors flipped, integer tensors rolled, numbers and lists of
    numbers increased, lists of words reversed, tuples moved part by part, tables reweighted."""
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bool:
            return ~value
        if value.is_floating_point():
            return value + (0.5 + gaussian(91 + salt, *value.shape).abs()).to(value.dtype)
        return value.roll(1, 0) if value.ndim else value + 1
    if isinstance(value, np.ndarray):
        return (
            value + 1 if value.dtype.kind in "iu" else value + 0.5 + np.abs(gaussian(91 + salt, *value.shape).numpy())
        )
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, tuple):
        return tuple(moved(v, salt + i) for i, v in enumerate(value))
    if isinstance(value, list):
        return [v + 1 for v in value] if all(isinstance(v, (int, float)) for v in value) else value[::-1]
    if isinstance(value, dict):  # a probability table {context: {word: p}}: squared and renormalised
        out = {}
        for key, following in value.items():
            total = sum(p * p for p in following.values()) if isinstance(following, dict) else 0
            out[key] = {w: p * p / total for w, p in following.items()} if total else following
        return out
    return value


def _get(args: list, position):
    index, key = position if isinstance(position, tuple) else (position, None)
    if index >= len(args):
        raise IndexError(position)
    return args[index] if key is None else args[index][key]


def _put(args: list, position, value) -> list:
    index, key = position if isinstance(position, tuple) else (position, None)
    out = list(args)
    out[index] = value if key is None else {**out[index], key: value}
    return out


@dataclass
class Observation:
    """What the probe saw: the arguments of each case, the student's results (an exception's message
    where it raised, see ``raised``) and the reference's, and why the function does no real work."""

    cases: list
    results: list
    expected: list
    raised: list = field(default_factory=list)
    degenerate: str | None = None
    # With Probe.per_output, where only some outputs of a tuple do no real work: output index -> why, in the
    # order found (placeholders first, then ignored inputs); the checks of the other outputs are still paid.
    outputs: dict = field(default_factory=dict)

    def __bool__(self) -> bool:  # the judge asks "is it degenerate?"
        return bool(self.degenerate)

    def against(self, outputs: Sequence[int] | None) -> tuple[int | None, str] | None:
        """(output, why) when a check that judges ``outputs`` (None: all of them) can pay nothing: the function
        does no real work, or one of those outputs does none; None when it can pay."""
        if self.degenerate:
            return None, self.degenerate
        return next(((k, why) for k, why in self.outputs.items() if outputs is None or k in outputs), None)

    def __str__(self) -> str:
        return str(self.degenerate or "")

    @property
    def status(self) -> str:
        return getattr(self.degenerate, "status", "failed")


@dataclass(frozen=True)
class Probe:
    """Whether ``name`` does real work, on ``count`` cases drawn from ``cases`` (the strategy the values
    check draws from; ``build(case)`` gives the arguments) against ``reference``. ``inputs`` names the
    main inputs the result must respond to; ``move`` overrides how one of them is changed
    (``move[position](value, args)``). With ``per_output``, each output of a tuple must do real work."""

    name: str
    cases: object
    build: Callable[[object], list]
    reference: Callable
    inputs: Mapping
    count: int = 5
    move: Mapping = field(default_factory=dict)
    per_output: bool = False

    def __call__(self, student: StudentCode) -> Observation:
        drawn = [self.build(case) for case in drawn_cases(self.cases, self.count, f"probe:{self.name}")]
        seen = Observation(drawn, [], [self.reference(*args) for args in drawn])
        for args in drawn:
            try:
                seen.results.append(call(student, self.name, *args).value)
                seen.raised.append(None)
            except StudentErrorAt as exc:
                seen.results.append(None)
                seen.raised.append(exc.message)
        seen.degenerate = self._why(student, seen)
        return seen

    def _why(self, student: StudentCode, seen: Observation) -> str | None:
        if all(seen.raised):
            return Degenerate(f"it raised on every valid input, for one: {seen.raised[0]}", "error")
        ok = [i for i, r in enumerate(seen.raised) if r is None]
        got, want = [seen.results[i] for i in ok], [seen.expected[i] for i in ok]
        args = [seen.cases[i] for i in ok]
        if self.per_output and all(isinstance(o, (tuple, list)) and len(o) == len(got[0]) for o in got):
            n = len(got[0])
            for k in range(n):
                why = _trivial(
                    [o[k] for o in got],
                    [w[k] if isinstance(w, (tuple, list)) else w for w in want],
                    args,
                    f"its output {k} is",
                )
                if why:
                    seen.outputs[k] = why
            if len(seen.outputs) < n:
                self._ignored(student, seen, ok, [k for k in range(n) if k not in seen.outputs])
            # every output does no real work: the function does none (why: the first found)
            return next(iter(seen.outputs.values())) if len(seen.outputs) == n else None
        why = _trivial(got, want, args, "it returns")
        if why:
            return why
        return self._ignored(student, seen, ok)

    def _ignored(
        self, student: StudentCode, seen: Observation, ok: list[int], outputs: list[int] | None = None
    ) -> str | None:
        """Why the result ignores a main input (the first found), or with ``outputs``: each of those outputs
        that ignores one is noted in ``seen.outputs`` (and None returned)."""
        parts: list = [None]
        if outputs is not None:
            parts = outputs
        elif self.per_output and all(isinstance(seen.results[i], (tuple, list)) for i in ok):
            parts = list(range(min(len(seen.results[i]) for i in ok)))
        answers: dict = {}  # (case, input) -> (the reference's answer, the student's) with that input moved

        def moved_answers(i, position, salt):
            if (i, position) not in answers:
                answers[i, position] = None
                try:
                    value = _get(seen.cases[i], position)
                    nudge = self.move.get(position)
                    changed = _put(
                        seen.cases[i], position, nudge(value, seen.cases[i]) if nudge else moved(value, salt)
                    )
                    want = self.reference(*changed)
                except Exception:  # no such input in this case, or its changed value is not valid here
                    return None
                try:
                    got = call(student, self.name, *changed).value
                except StudentErrorAt:
                    got = _RAISED  # raising where it did not is a response (the values checks judge it)
                answers[i, position] = (want, got)
            return answers[i, position]

        for salt, (position, label) in enumerate(self.inputs.items()):
            for part in parts:
                if outputs is not None and part in seen.outputs:
                    continue  # already known to do no real work
                answer_moves = False
                for i in ok:
                    pair = moved_answers(i, position, salt)
                    if pair is None or same(_part(pair[0], part), _part(seen.expected[i], part)):
                        continue  # the correct answer does not depend on this input here
                    answer_moves = True
                    if pair[1] is _RAISED or not same(_part(pair[1], part), _part(seen.results[i], part)):
                        break  # it responds to this input
                else:
                    if answer_moves:
                        what = "its result" if part is None else f"its output {part}"
                        why = Degenerate(f"{what} does not change when {label} changes, so it ignores {label}")
                        if outputs is None:
                            return why
                        seen.outputs[part] = why
        return None


_RAISED = object()


def _part(value, part):
    if part is None:
        return value
    return value[part] if isinstance(value, (tuple, list)) and len(value) > part else value


def _echoes(out, args) -> bool:
    """``out`` is one of ``args``, or a tuple made only of them."""
    if any(same(out, a) for a in args):
        return True
    return isinstance(out, (tuple, list)) and len(out) > 0 and all(any(same(o, a) for a in args) for o in out)


def _trivial(got: Sequence, want: Sequence, cases: Sequence, subject: str) -> str | None:
    """Why ``got`` shows no real work where the correct answers ``want`` show some: only zeros, one value
    for every case, an input echoed; None when it shows some (or the correct answers are as trivial)."""
    if not got:
        return None
    if all(_blank(g) for g in got) and not all(_blank(w) for w in want):
        return Degenerate(f"{subject} only zeros" if numbers(got[0]) is not None else f"{subject} empty results")
    if len(got) > 1 and all(same(g, got[0]) for g in got[1:]) and not all(same(w, want[0]) for w in want[1:]):
        return Degenerate(f"{subject} the same value, {describe(got[0])}, for every input")
    if all(_echoes(g, a) for g, a in zip(got, cases)) and not all(_echoes(w, a) for w, a in zip(want, cases)):
        return Degenerate(f"{subject} one of its inputs unchanged")
    return None
