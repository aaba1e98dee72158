"""What a function answered to the calls the checks made, recorded on the grader's side of the calls, so a
surviving mutant's answers can be compared with the solution's (suspected equivalent: the same on every
input the checks drew, to a few units in the last place), and the inputs the checks use can be compared
with the ones the self-checks print worked examples for (a leak)."""

from __future__ import annotations

import hashlib
import math
from typing import Any, Callable

import numpy as np
import torch

ULPS = 4  # how many units in the last place of the output's dtype count as the same number


def _array(value) -> np.ndarray | None:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().resolve_conj().resolve_neg().numpy()
    if isinstance(value, np.ndarray):
        return value
    return None


def digest(value: Any) -> str:
    """A digest of a call's arguments that does not depend on the container (a tensor or an array, an int
    or a float): two calls with the same numbers in the same shapes get the same digest."""
    h = hashlib.sha256()

    def feed(v):
        array = _array(v)
        if array is not None:
            numbers = np.ascontiguousarray(array, dtype=np.float64) if array.dtype != object else array.astype(str)
            h.update(f"a{numbers.shape}".encode())
            h.update(numbers.tobytes())
        elif isinstance(v, (bool, int, float)) and not isinstance(v, bool):
            h.update(f"n{float(v)!r}".encode())
        elif isinstance(v, (list, tuple)):
            h.update(f"[{len(v)}".encode())
            for item in v:
                feed(item)
        elif isinstance(v, dict):
            h.update(f"{{{len(v)}".encode())
            for key in sorted(v, key=repr):
                feed(key)
                feed(v[key])
        else:
            h.update(f"o{v!r}".encode())

    feed(value)
    return h.hexdigest()[:16]


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types and shapes, floats to ULPS units in the last place of their dtype."""
    x, y = _array(a), _array(b)
    if x is not None or y is not None:
        if x is None or y is None or type(a) is not type(b) or x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.kind not in "fc":
            return bool(np.array_equal(x, y))
        if not np.array_equal(np.isnan(x), np.isnan(y)) or not np.array_equal(
            np.isinf(x) & (x > 0), np.isinf(y) & (y > 0)
        ):
            return False
        finite = np.isfinite(x) & np.isfinite(y)
        x, y = x[finite], y[finite]
        tolerance = ULPS * np.finfo(x.dtype).eps * np.maximum(np.abs(x), np.abs(y)) + np.finfo(x.dtype).tiny
        return bool(np.all(np.abs(x - y) <= tolerance))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(p, q) for p, q in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= ULPS * 2.2e-16 * max(abs(a), abs(b))
    return type(a) is type(b) and a == b


class Recorder:
    """A student's code as the checks see it, with every call's name, arguments and answer written down.
    Everything else (``defines``, object handles) passes through unrecorded."""

    def __init__(self, student):
        self._student = student
        self.calls: list[tuple[str, str, Any]] = []  # (name, digest of the arguments, what came back)

    def call(self, name, args, **kwargs):
        reply = self._student.call(name, args, **kwargs)
        self.calls.append((name, digest(list(args)), (reply.value, reply.grads, reply.again)))
        return reply

    def get(self, name):
        value = self._student.get(name)
        self.calls.append((name, "", value))
        return value

    def __getattr__(self, attribute):
        return getattr(self._student, attribute)


def same_answers(mutant: list, solution: list) -> bool:
    """The mutant answered every call the checks made on the solution, in the same order, the same way."""
    return len(mutant) == len(solution) and all(
        m[0] == s[0] and m[1] == s[1] and same(m[2], s[2]) for m, s in zip(mutant, solution)
    )


def recording(function: Callable, name: str, log: list, active: list) -> Callable:
    """``function`` that, while ``active`` is not empty, writes each outermost call to ``log`` as
    (name, digest of the arguments, the call as text, what it returned)."""
    depth: list = []

    def recorded(*args, **kwargs):
        if not active or depth:
            return function(*args, **kwargs)
        shown = ", ".join([_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()])
        key = digest([*args, *kwargs.values()])
        depth.append(1)
        try:
            value = function(*args, **kwargs)
        finally:
            depth.pop()
        log.append((name, key, f"{name}({shown})", value))
        return value

    return recorded


def distinctive(value) -> bool:
    """Whether a result holds a number a student could not guess from the exercise's wording alone: an
    integer of two digits or more, or a finite number that is not a whole number (a count, a weight, a
    sine), as opposed to masks of 0 and -inf, indicator values and empty results."""
    array = _array(value)
    if array is not None:
        if array.dtype.kind not in "biuf" or array.size > 10**6:
            return False
        numbers = array.astype(np.float64).ravel()
        finite = numbers[np.isfinite(numbers)]
        return bool(np.any((np.abs(finite) >= 10) | (finite != np.round(finite))))
    if isinstance(value, (list, tuple)):
        return any(distinctive(v) for v in value)
    if isinstance(value, dict):
        return any(distinctive(v) for v in value.values())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return math.isfinite(value) and (abs(value) >= 10 or value != round(value))
    return False


def _short(value) -> str:
    array = _array(value)
    if array is not None:
        return f"<{type(value).__name__} of shape {tuple(array.shape)}>"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
