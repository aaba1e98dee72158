"""Properties judged on the student's own function.

A property that does not depend on the formula (gradients agree with how the function's own output
changes, one example gives what the batch gives, the result does not depend on other sequences...) is
judged on the student's function alone, from calls the grader makes, so a wrong formula costs the
values check and nothing else. Such properties pay only for an answer that does real work (the gate,
:mod:`grader.checking.gate`).
"""

from __future__ import annotations

from typing import Sequence

import torch

from .base import CheckFailed, Lazy, NotJudged, call, fail_if, format_call
from .calls import StudentCode
from .compare import PRECISION, compare_arrays, describe, kind_of
from .strategies import gaussian


def fd_settings(dtype: torch.dtype) -> tuple[float, float]:
    """Step and relative tolerance of a finite-difference check of a result of ``dtype``, or of the coarser
    dtype it was computed in when that cast has been charged already (grader.checking.compare.PRECISION)."""
    return (1e-6, 1e-5) if dtype == torch.float64 and PRECISION.get() in (None, torch.float64) else (1e-2, 5e-2)


def _directional(student, name, args, wrt, directions, cot, eps) -> float:
    """Finite-difference estimate of d/dt sum(f(args + t * directions) * cot) at t = 0, from two calls."""

    def at(sign):
        moved = list(args)
        for i, d in zip(wrt, directions):
            moved[i] = args[i] + sign * eps * d
        out = call(student, name, *moved).value
        if kind_of(out) != "tensor" or tuple(out.shape) != tuple(cot.shape):
            raise NotJudged(
                f"{format_call(name, moved)} returned {describe(out)}, not a tensor of shape "
                f"{tuple(cot.shape)} (see the values check)",
                kind="not_judged",
            )
        return float((out.detach().to(torch.float64) * cot).sum())

    return (at(+1) - at(-1)) / (2 * eps)


def assert_gradients_match_own_function(
    student: StudentCode,
    name: str,
    args: list,
    wrt: Sequence[int],
    arg_names: Sequence[str],
    out_shape: tuple,
    seed: int,
) -> None:
    """Autograd's gradients of ``name`` agree with finite differences of the student's own function."""
    cot = gaussian(seed + 7, *out_shape)
    context = Lazy(lambda: f"for {format_call(name, args)}")
    reply = call(student, name, *args, grad_wrt=tuple(wrt), cotangent=cot)
    value = reply.value
    if kind_of(value) != "tensor" or tuple(value.shape) != tuple(out_shape):
        raise NotJudged(
            f"{context} the result is {describe(value)}, not a tensor of shape {out_shape} (see the values check)",
            kind="not_judged",
        )
    if reply.grads is None:
        raise CheckFailed(
            f"{context}: the result is not differentiable (it does not require grad); build it from "
            f"torch operations on the inputs",
            kind="not_differentiable",
        )
    eps, rtol = fd_settings(value.dtype)
    for i, (index, grad) in enumerate(zip(wrt, reply.grads)):
        if kind_of(grad) != "tensor" or tuple(grad.shape) != tuple(args[index].shape):
            raise CheckFailed(
                f"{context}: the gradient with respect to {arg_names[i]} is {describe(grad)}", kind="not_differentiable"
            )
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
                f"predicts {predicted[i]:.6g}",
                kind="not_differentiable",
            )
    raise CheckFailed(
        f"{context}: the gradients autograd found do not match how your function's own output changes "
        f"(rate {total:.6g} by finite differences, {sum(predicted):.6g} from the gradients)",
        kind="not_differentiable",
    )


def assert_one_example_matches_batch(
    student: StudentCode,
    name: str,
    batched: list,
    single,
    rows: Sequence[int],
    out_row=lambda y, i: y[i],
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> None:
    """``f(batch)[i] == f(example i)`` for the student's own ``f``; ``single(i)`` gives example i's arguments."""
    context = Lazy(lambda: f"for {format_call(name, batched)}")
    whole = call(student, name, *batched).value
    if kind_of(whole) != "tensor":
        raise NotJudged(
            f"{context} the result is {describe(whole)}, not a tensor (see the values check)", kind="not_judged"
        )
    for i in rows:
        args = single(i)
        one = call(student, name, *args).value
        try:
            row = out_row(whole, i)
        except (IndexError, RuntimeError):
            raise NotJudged(
                f"{context} the result has shape {tuple(whole.shape)}, which has no row {i} (see the values check)",
                kind="not_judged",
            ) from None
        fail_if(
            compare_arrays(one, row, name=f"{name} on example {i} alone", rtol=rtol, atol=atol, kind="tensor"),
            f"{format_call(name, args)} should equal row {i} of the batched result",
        )
