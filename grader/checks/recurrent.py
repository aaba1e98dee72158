"""Checks for recurrent_unit, ar_as_recurrent and the batched forward pass."""
from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

import reference

from .. import strategies
from ..calls import StudentMissing
from ..compare import as_numpy, compare_arrays, describe, kind_of
from ..strategies import Dims, gaussian, rnn_sequence_inputs, rnn_step_inputs
from .base import CheckFailed, Passed, StudentErrorAt, call, fail_if, for_all, format_call

SMALL = Dims(B=2, T=3, d_in=2, d_h=3, seed=0)
RTOL, ATOL = 1e-6, 1e-9


def _expect_tensor(value, shape, context: str, name: str = "the result") -> torch.Tensor:
    if kind_of(value) != "tensor":
        raise CheckFailed(f"{context}: {name} should be a torch tensor but is {describe(value)}")
    if tuple(value.shape) != tuple(shape):
        raise CheckFailed(f"{context}: {name} has shape {tuple(value.shape)}; expected {tuple(shape)}")
    return value.detach()


def _reference_vjp(fn, args, grad_wrt, cotangent):
    leaves = [a.clone().requires_grad_(i in grad_wrt) for i, a in enumerate(args)]
    out = fn(*leaves)
    grads = torch.autograd.grad((out * cotangent).sum(), [leaves[i] for i in grad_wrt], allow_unused=True)
    return out.detach(), [torch.zeros_like(leaves[i]) if g is None else g for i, g in zip(grad_wrt, grads)]


def _compare_grads(reply, want, names, context):
    if reply.grads is None:
        raise CheckFailed(f"{context}: the result is not differentiable (it does not require grad); "
                          f"build it from torch operations on the inputs, without .detach(), .numpy() or torch.tensor(...)")
    for got, expected, name in zip(reply.grads, want, names):
        fail_if(compare_arrays(got, expected, name=f"the gradient with respect to {name}", rtol=1e-5, atol=1e-8,
                               kind="tensor", check_dtype=False), context)


# --- recurrent_unit ------------------------------------------------------------------------------------

def _check_unit_values(student, batched: bool):
    def prop(dims):
        args = rnn_step_inputs(dims, batched=batched)
        context = f"for {format_call('recurrent_unit', args)}"
        got = call(student, "recurrent_unit", *args).value
        want = reference.recurrent_unit(*args)
        _expect_tensor(got, want.shape, context)
        fail_if(compare_arrays(got, want, rtol=RTOL, atol=ATOL), context)

    for_all(strategies.rnn_dims(), prop, examples=(SMALL,))


def check_recurrent_unit_values(student):
    """recurrent_unit computes relu(h_prev @ Wrec.T + x @ Win.T) for a batch of inputs."""
    _check_unit_values(student, batched=True)


def check_recurrent_unit_single_example(student):
    """recurrent_unit also works on one example: x of shape (d_in,) and h_prev of shape (d_h,)."""
    _check_unit_values(student, batched=False)


def check_recurrent_unit_gradients(student):
    """Gradients of recurrent_unit with respect to x, h_prev, Wrec and Win match those of the formula."""

    def prop(dims):
        args = rnn_step_inputs(dims)
        cot = gaussian(dims.seed + 7, dims.B, dims.d_h)
        context = f"for {format_call('recurrent_unit', args)}"
        reply = call(student, "recurrent_unit", *args, grad_wrt=(0, 1, 2, 3), cotangent=cot)
        _expect_tensor(reply.value, (dims.B, dims.d_h), context)
        _, want = _reference_vjp(reference.recurrent_unit, args, (0, 1, 2, 3), cot)
        _compare_grads(reply, want, ("x", "h_prev", "Wrec", "Win"), context)

    for_all(strategies.rnn_dims(), prop, max_examples=10, examples=(SMALL,))


# --- ar_as_recurrent -----------------------------------------------------------------------------------

def _unpack_linear_rnn(value, context):
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise CheckFailed(f"{context} should return three tensors (Wrec, win, wout); got {describe(value)}")
    Wrec, win, wout = (as_numpy(v).astype(np.float64) if kind_of(v) in ("tensor", "ndarray") else None for v in value)
    if Wrec is None or win is None or wout is None:
        raise CheckFailed(f"{context} should return tensors; got {', '.join(describe(v) for v in value)}")
    if Wrec.ndim != 2 or Wrec.shape[0] != Wrec.shape[1]:
        raise CheckFailed(f"{context}: Wrec should be a square (d_h, d_h) matrix; got shape {Wrec.shape}")
    d_h = Wrec.shape[0]
    for name, vec in (("win", win), ("wout", wout)):
        if vec.size != d_h:
            raise CheckFailed(f"{context}: {name} should hold d_h = {d_h} numbers (one per hidden unit); got shape {vec.shape}")
    return Wrec, win.reshape(d_h), wout.reshape(d_h)


def check_ar_as_recurrent_shapes(student):
    """ar_as_recurrent returns (Wrec, win, wout) with Wrec square and win, wout one number per hidden unit."""

    def prop(w):
        _unpack_linear_rnn(call(student, "ar_as_recurrent", w).value, format_call("ar_as_recurrent", (w,)))

    for_all(strategies.ar_coefficients(), prop, max_examples=10)


def check_ar_as_recurrent_reproduces_ar_model(student):
    """The linear unit h(t) = Wrec h(t-1) + win x(t), y(t) = wout . h(t) reproduces y(t) = sum_tau w[tau] x(t - tau)."""

    def prop(case):
        w, x = case
        context = format_call("ar_as_recurrent", (w,))
        Wrec, win, wout = _unpack_linear_rnn(call(student, "ar_as_recurrent", w).value, context)
        h = np.zeros(Wrec.shape[0])
        got = []
        for value in x:
            h = Wrec @ h + win * value
            got.append(float(wout @ h))
        want = np.convolve(x, w)[: len(x)]  # y(t) = sum_tau w[tau] x(t - tau)
        fail_if(compare_arrays(np.array(got), want, name=f"the unit's outputs for inputs x = {describe(x)}",
                               rtol=1e-6, atol=1e-9), context)

    inputs = st.tuples(strategies.ar_coefficients(), st.lists(st.sampled_from([1.0, 0.0, -2.0, 3.0]), min_size=1, max_size=8)
                       .map(lambda v: np.array(v)))
    for_all(inputs, prop, examples=((np.array([0.5, 2.0]), np.array([1.0, 0.0, 0.0, 0.0])),))


# --- forward -------------------------------------------------------------------------------------------

def _own_unit(student):
    """The student's recurrent_unit as a step function, or None when it cannot be used."""
    if not student.defines("recurrent_unit"):
        return None

    def step(x, h, Wrec, Win, **options):
        return call(student, "recurrent_unit", x, h, Wrec, Win, **options)

    return step


def _compose(step, seqs, Wrec, Win, Wout):
    """forward's definition, one step at a time, with ``step`` as the unit: (yhat, hidden states)."""
    B, T, _ = seqs.shape
    hs = [torch.zeros(B, Wrec.shape[0], dtype=seqs.dtype)]  # h(0): (B, d_h)
    for t in range(T):
        h = step(seqs[:, t], hs[-1], Wrec, Win).value
        if kind_of(h) != "tensor" or tuple(h.shape) != tuple(hs[-1].shape):
            raise ValueError("unit unusable")
        hs.append(h.detach())
    return (hs[-1] @ Wout)[:, 0], hs  # (B,)


class _ReferenceStep:
    def __call__(self, x, h, Wrec, Win, grad_wrt=(), cotangent=None):
        from ..calls import Reply
        if not grad_wrt:
            return Reply(value=reference.recurrent_unit(x, h, Wrec, Win))
        out, grads = _reference_vjp(reference.recurrent_unit, [x, h, Wrec, Win], grad_wrt, cotangent)
        return Reply(value=out, grads=tuple(grads))


def _expected_forward(student, args):
    """forward's expected output built from the student's own unit, falling back to the reference one."""
    own = _own_unit(student)
    if own is not None:
        try:
            y, hs = _compose(own, *args)
            return y, hs, own, "your recurrent_unit"
        except (StudentErrorAt, ValueError):
            pass
    y, hs = _compose(_ReferenceStep(), *args)
    return y, hs, _ReferenceStep(), "a correct recurrent_unit (yours could not be used)"


def check_forward_matches_own_recurrent_unit(student):
    """forward returns (h(T) @ Wout)[:, 0] where h(t) = recurrent_unit(seqs[:, t-1], h(t-1)) and h(0) = 0."""

    def prop(dims):
        args = rnn_sequence_inputs(dims)
        want, _, _, source = _expected_forward(student, args)
        context = f"for {format_call('forward', args)} (expected values computed with {source})"
        got = _expect_tensor(call(student, "forward", *args).value, (dims.B,), context)
        fail_if(compare_arrays(got, want, rtol=RTOL, atol=ATOL), context)

    for_all(strategies.rnn_dims(), prop, examples=(SMALL,))


def check_forward_gradients(student):
    """Gradients of forward with respect to seqs, Wrec, Win and Wout are those of the unrolled recurrence."""

    def prop(dims):
        seqs, Wrec, Win, Wout = args = rnn_sequence_inputs(dims)
        _, hs, step, source = _expected_forward(student, args)
        cot = gaussian(dims.seed + 9, dims.B)
        # Backpropagate through the unrolled recurrence, asking the unit itself for each step's VJP.
        g_Wout = hs[-1].T @ cot[:, None]  # (d_h, 1)
        g_h = cot[:, None] @ Wout.T  # (B, d_h)
        g_seqs, g_Wrec, g_Win = torch.zeros_like(seqs), torch.zeros_like(Wrec), torch.zeros_like(Win)
        for t in reversed(range(dims.T)):
            reply = step(seqs[:, t], hs[t], Wrec, Win, grad_wrt=(0, 1, 2, 3), cotangent=g_h)
            if reply.grads is None:
                step, source = _ReferenceStep(), "a correct recurrent_unit (yours is not differentiable)"
                reply = step(seqs[:, t], hs[t], Wrec, Win, grad_wrt=(0, 1, 2, 3), cotangent=g_h)
            g_x, g_h, gr, gi = reply.grads
            g_seqs[:, t] = g_x
            g_Wrec, g_Win = g_Wrec + gr, g_Win + gi
        context = f"for {format_call('forward', args)} (expected gradients computed with {source})"
        reply = call(student, "forward", *args, grad_wrt=(0, 1, 2, 3), cotangent=cot)
        _expect_tensor(reply.value, (dims.B,), context)
        _compare_grads(reply, [g_seqs, g_Wrec, g_Win, g_Wout], ("seqs", "Wrec", "Win", "Wout"), context)

    for_all(strategies.rnn_dims(), prop, max_examples=8, examples=(SMALL,))


def check_forward_batch_permutation_equivariance(student):
    """Reordering the sequences in a batch reorders forward's outputs the same way."""

    def prop(dims):
        seqs, *weights = args = rnn_sequence_inputs(dims)
        perm = torch.from_numpy(np.random.default_rng(dims.seed).permutation(dims.B))
        context = f"for {format_call('forward', args)} and the batch reordered as {perm.tolist()}"
        y = _expect_tensor(call(student, "forward", *args).value, (dims.B,), context)
        y_perm = _expect_tensor(call(student, "forward", seqs[perm], *weights).value, (dims.B,), context)
        fail_if(compare_arrays(y_perm, y[perm], name="forward(seqs[perm])", rtol=RTOL, atol=ATOL), context
                + "; forward(seqs[perm]) should equal forward(seqs)[perm]")

    for_all(strategies.rnn_dims(min_batch=2), prop, max_examples=10, examples=(SMALL,))


def check_forward_batch_independence(student):
    """Each output of forward depends only on its own sequence: changing another sequence leaves it unchanged."""

    def prop(dims):
        seqs, *weights = args = rnn_sequence_inputs(dims)
        other = seqs.clone()
        other[1:] = gaussian(dims.seed + 11, dims.B - 1, dims.T, dims.d_in)  # change every sequence but the first
        context = f"for {format_call('forward', args)} with sequences 1..{dims.B - 1} replaced"
        y = _expect_tensor(call(student, "forward", *args).value, (dims.B,), context)
        y2 = _expect_tensor(call(student, "forward", other, *weights).value, (dims.B,), context)
        fail_if(compare_arrays(y2[:1], y[:1], name="the output for sequence 0", rtol=RTOL, atol=ATOL), context)

    for_all(strategies.rnn_dims(min_batch=2), prop, max_examples=10, examples=(SMALL,))


def check_forward_is_vectorized(student):
    """forward calls recurrent_unit exactly once per time step, each time on the whole batch (B, d_in)."""
    if not student.defines("recurrent_unit"):
        raise StudentMissing("recurrent_unit", "forward must be built from it")
    dims = Dims(B=3, T=4, d_in=2, d_h=3, seed=5)
    args = rnn_sequence_inputs(dims)
    trace = call(student, "forward", *args, trace="recurrent_unit").trace
    want = [(dims.B, dims.d_in)] * dims.T
    got = [tuple(s) for s in trace]
    if got != want:
        if not got:
            detail = "it never called recurrent_unit; write the loop over time with your recurrent_unit"
        elif len(got) == dims.B * dims.T:
            detail = "it called recurrent_unit once per example per step; pass the whole batch seqs[:, t] at once"
        else:
            detail = f"its calls received x of shapes {got[:6]}{'...' if len(got) > 6 else ''}"
        raise CheckFailed(f"for seqs of shape {(dims.B, dims.T, dims.d_in)} forward should call recurrent_unit "
                          f"{dims.T} times with x of shape {(dims.B, dims.d_in)}; {detail}")
    return Passed()
