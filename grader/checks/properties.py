"""Properties judged on the student's own function, and the gate that keeps trivial code from them.

A property that does not depend on the formula (gradients agree with how the function's own output
changes, one example gives what the batch gives, the result does not depend on other sequences...) is
judged on the student's function alone, from calls the grader makes, so a wrong formula costs the
values check and nothing else. Such properties pay only for an answer that does some work: a function
that returns a constant, only zeros, one of its inputs, or that raises on every valid input is
*degenerate* (see :func:`degeneracy`), and earns none of them.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import torch

from ..calls import StudentCode
from ..codec import Unsupported
from ..compare import compare_arrays, describe, kind_of, shape_of
from ..strategies import gaussian
from .base import CheckFailed, Lazy, NotJudged, StudentErrorAt, call, fail_if, format_call


def _numbers(value) -> np.ndarray | None:
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
        parts = [_numbers(v) for v in value]
        return None if any(p is None for p in parts) or not parts else np.concatenate(parts)
    return None


def _same(a, b) -> bool:
    x, y = _numbers(a), _numbers(b)
    return x is not None and y is not None and x.shape == y.shape and shape_of(a) == shape_of(b) \
        and bool(np.all((x == y) | (np.isnan(x) & np.isnan(y))))


class Degenerate(str):
    """Why a function does no real work; ``status`` is the status its gated checks get ("error" when it raised)."""

    def __new__(cls, text: str, status: str = "failed"):
        self = super().__new__(cls, text)
        self.status = status
        return self


def _echoes(out, args) -> bool:
    """``out`` is one of ``args``, or a tuple made only of them."""
    if any(_same(out, a) for a in args):
        return True
    return isinstance(out, (tuple, list)) and len(out) > 0 and all(any(_same(o, a) for a in args) for o in out)


def _why_degenerate(outs: list, cases: Sequence[tuple], subject: str) -> str | None:
    """Why the results ``outs`` of ``cases`` show no real work (only zeros, one value for every input, an
    input echoed), named after ``subject`` ("it returns", "its output 1 is"); None when they show some."""
    if all(not np.any(_numbers(out)) for out in outs):
        return Degenerate(f"{subject} only zeros")
    if all(_same(out, outs[0]) for out in outs[1:]):
        return Degenerate(f"{subject} the same value, {describe(outs[0])}, for every input")
    if all(_echoes(out, args) for out, args in zip(outs, cases)):
        return Degenerate(f"{subject} one of its inputs unchanged")
    return None


def degeneracy(student: StudentCode, name: str, cases: Sequence[tuple], *, per_output: bool = False) -> str | None:
    """Why ``name`` does no real work on ``cases`` (valid inputs whose correct answers differ, are not
    all zero and are none of the inputs), or None when it does some. With ``per_output``, a function
    returning a tuple must do real work in each of its outputs."""
    outs = []
    for args in cases:
        try:
            outs.append(call(student, name, *args).value)
        except StudentErrorAt as exc:
            return Degenerate(f"it raised on a valid input: {exc.message}", "error")
    if any(_numbers(v) is None for v in outs):
        return None  # not plain numbers: the checks themselves say what is wrong with the type
    if per_output and all(isinstance(o, (tuple, list)) and len(o) == len(outs[0]) for o in outs):
        for k in range(len(outs[0])):
            why = _why_degenerate([o[k] for o in outs], cases, f"its output {k} is")
            if why:
                return why
        return None
    return _why_degenerate(outs, cases, "it returns")


def ignored_input(student: StudentCode, name: str, args: Sequence, which: Mapping, part: int | None = None) -> str | None:
    """Why ``name`` does no real work on ``args``: an input it ignores. ``which`` maps an argument's index
    (or ``(index, key)`` for an entry of a dict argument) to its name; each is moved in turn (floating-point
    tensors only) and the result (its output ``part``, for a function returning a tuple) must change.
    None when the function responds to every one of them."""
    def result(values):
        out = call(student, name, *values).value
        if part is not None and isinstance(out, (tuple, list)) and len(out) > part:
            return out[part]
        return out

    try:
        base = result(args)
    except StudentErrorAt as exc:
        return Degenerate(f"it raised on a valid input: {exc.message}", "error")
    for position, label in which.items():
        index, key = position if isinstance(position, tuple) else (position, None)
        moved = list(args)
        target = moved[index][key] if key is not None else moved[index]
        if not (isinstance(target, torch.Tensor) and target.is_floating_point()):
            continue
        nudged = target + (0.5 + gaussian(91 + index, *target.shape).abs()).to(target.dtype)
        if key is not None:
            moved[index] = {**moved[index], key: nudged}
        else:
            moved[index] = nudged
        try:
            out = result(moved)
        except StudentErrorAt:
            return None  # raising on some valid input is the values checks' business
        if _numbers(out) is not None and _same(out, base):
            return Degenerate(f"its result does not change when {label} changes, so it ignores {label}")
    return None


def _directional(student, name, args, wrt, directions, cot, eps) -> float:
    """Finite-difference estimate of d/dt sum(f(args + t * directions) * cot) at t = 0, from two calls."""
    def at(sign):
        moved = list(args)
        for i, d in zip(wrt, directions):
            moved[i] = args[i] + sign * eps * d
        out = call(student, name, *moved).value
        if kind_of(out) != "tensor" or tuple(out.shape) != tuple(cot.shape):
            raise NotJudged(f"{format_call(name, moved)} returned {describe(out)}, not a tensor of shape "
                            f"{tuple(cot.shape)} (see the values check)", kind="not_judged")
        return float((out.detach().to(torch.float64) * cot).sum())

    return (at(+1) - at(-1)) / (2 * eps)


def assert_gradients_match_own_function(student: StudentCode, name: str, args: list, wrt: Sequence[int],
                                       arg_names: Sequence[str], out_shape: tuple, seed: int) -> None:
    """Autograd's gradients of ``name`` agree with finite differences of the student's own function."""
    cot = gaussian(seed + 7, *out_shape)
    context = Lazy(lambda: f"for {format_call(name, args)}")
    reply = call(student, name, *args, grad_wrt=tuple(wrt), cotangent=cot)
    value = reply.value
    if kind_of(value) != "tensor" or tuple(value.shape) != tuple(out_shape):
        raise NotJudged(f"{context} the result is {describe(value)}, not a tensor of shape {out_shape} "
                        f"(see the values check)", kind="not_judged")
    if reply.grads is None:
        raise CheckFailed(f"{context}: the result is not differentiable (it does not require grad); build it from "
                          f"torch operations on the inputs", kind="not_differentiable")
    eps = 1e-6 if value.dtype == torch.float64 else 1e-2
    rtol = 1e-5 if value.dtype == torch.float64 else 5e-2
    for i, (index, grad) in enumerate(zip(wrt, reply.grads)):
        if kind_of(grad) != "tensor" or tuple(grad.shape) != tuple(args[index].shape):
            raise CheckFailed(f"{context}: the gradient with respect to {arg_names[i]} is {describe(grad)}",
                              kind="not_differentiable")
    directions = [gaussian(seed + 31 + k, *args[i].shape) for k, i in enumerate(wrt)]
    predicted = [float((g.to(torch.float64) * d).sum()) for g, d in zip(reply.grads, directions)]
    total = _directional(student, name, args, wrt, directions, cot, eps)
    scale = 1.0 + sum(abs(p) for p in predicted)
    if abs(total - sum(predicted)) <= rtol * scale:
        return
    for i, index in enumerate(wrt):  # which argument's gradient is off
        numeric = _directional(student, name, args, [index], [directions[i]], cot, eps)
        if abs(numeric - predicted[i]) > rtol * (1.0 + abs(predicted[i])):
            raise CheckFailed(
                f"{context}: the gradient autograd found with respect to {arg_names[i]} does not match how your "
                f"function's own output changes: moving {arg_names[i]} along a random direction changes "
                f"sum(output * c) at rate {numeric:.6g} (finite differences of your function), but the gradient "
                f"predicts {predicted[i]:.6g}", kind="not_differentiable")
    raise CheckFailed(f"{context}: the gradients autograd found do not match how your function's own output changes "
                      f"(rate {total:.6g} by finite differences, {sum(predicted):.6g} from the gradients)",
                      kind="not_differentiable")


def assert_one_example_matches_batch(student: StudentCode, name: str, batched: list, single, rows: Sequence[int],
                                    out_row=lambda y, i: y[i], rtol: float = 1e-6, atol: float = 1e-9) -> None:
    """``f(batch)[i] == f(example i)`` for the student's own ``f``; ``single(i)`` gives example i's arguments."""
    context = Lazy(lambda: f"for {format_call(name, batched)}")
    whole = call(student, name, *batched).value
    if kind_of(whole) != "tensor":
        raise NotJudged(f"{context} the result is {describe(whole)}, not a tensor (see the values check)",
                        kind="not_judged")
    for i in rows:
        args = single(i)
        one = call(student, name, *args).value
        try:
            row = out_row(whole, i)
        except (IndexError, RuntimeError):
            raise NotJudged(f"{context} the result has shape {tuple(whole.shape)}, which has no row {i} "
                            f"(see the values check)", kind="not_judged") from None
        fail_if(compare_arrays(one, row, name=f"{name} on example {i} alone", rtol=rtol, atol=atol, kind="tensor"),
                f"{format_call(name, args)} should equal row {i} of the batched result")
