"""Checks for causal_mask, masked_self_attention and the attention parameter counts."""
from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

import reference

from .. import strategies
from ..compare import compare_arrays, describe, kind_of
from ..strategies import attention_inputs, gaussian
from .base import CheckFailed, Passed, call, expect_value_error, fail_if, for_all, format_call

SMALL = {"B": 2, "T": 4, "d": 3, "d_k": 2, "d_v": 2, "seed": 0}


def check_causal_mask_shape_and_dtype(student):
    """causal_mask(T) returns a floating-point torch tensor of shape (T, T)."""

    def prop(T):
        got = call(student, "causal_mask", T).value
        if kind_of(got) != "tensor" or tuple(got.shape) != (T, T) or not got.dtype.is_floating_point:
            raise CheckFailed(f"causal_mask({T}) should be a float tensor of shape ({T}, {T}); got {describe(got)}")

    for_all(st.integers(1, 8), prop, max_examples=8, examples=(3,))


def check_causal_mask_values(student):
    """causal_mask(T)[i, j] is 0 where key j <= query i and -inf where j > i."""

    def prop(T):
        got = call(student, "causal_mask", T).value
        want = reference.causal_mask(T)
        fail_if(compare_arrays(got, want, rtol=0, atol=0, kind="tensor", check_dtype=False), f"for causal_mask({T})")

    for_all(st.integers(1, 8), prop, max_examples=8, examples=(3,))


def _attention(student, args, context, **options):
    reply = call(student, "masked_self_attention", *args, **options)
    want_shape = tuple(args[0].shape[:-1]) + (args[3].shape[1],)
    got = reply.value
    if kind_of(got) != "tensor" or tuple(got.shape) != want_shape:
        raise CheckFailed(f"{context}: the result should be a tensor of shape {want_shape}; got {describe(got)}")
    return reply


def _check_values(student, batched):
    def prop(dims):
        args = attention_inputs(dims, batched=batched)
        context = f"for {format_call('masked_self_attention', args)}"
        got = _attention(student, args, context).value
        fail_if(compare_arrays(got, reference.masked_self_attention(*args), rtol=1e-6, atol=1e-9), context)

    for_all(strategies.attention_dims(), prop, examples=(SMALL,))


def check_masked_self_attention_values(student):
    """masked_self_attention computes softmax(Q K^T / sqrt(d_k) + causal_mask(T)) V for a batch (B, T, d)."""
    _check_values(student, batched=True)


def check_masked_self_attention_single_sequence(student):
    """masked_self_attention also accepts a single sequence X of shape (T, d)."""
    _check_values(student, batched=False)


def check_masked_self_attention_causality(student):
    """Changing the input at position j leaves every output at an earlier position i < j unchanged."""
    figure = {}

    def prop(dims):
        X, Wq, Wk, Wv = args = attention_inputs(dims)
        context = f"for {format_call('masked_self_attention', args)}"
        base = _attention(student, args, context).value
        T = dims["T"]
        influence = np.zeros((T, T), dtype=int)  # influence[i, j]: output i moved when input j moved
        for j in range(T):
            X2 = X.clone()
            X2[:, j] += gaussian(dims["seed"] + 100 + j, dims["B"], dims["d"])
            moved = _attention(student, [X2, Wq, Wk, Wv], context).value
            change = (moved - base).abs().amax(dim=(0, 2))  # (T,): largest change of each output position
            influence[:, j] = (change > 1e-12 * (1 + base.abs().max())).numpy()
        figure.update(kind="influence", T=T, matrix=influence.tolist())
        leaks = [(i, j) for i in range(T) for j in range(i + 1, T) if influence[i, j]]
        if leaks:
            i, j = leaks[0]
            raise CheckFailed(f"{context}: changing the input at position {j} changed the output at earlier position {i}; "
                              f"{len(leaks)} such (query, later key) pairs leak", figure=dict(figure))

    for_all(strategies.attention_dims(), prop, max_examples=8, examples=({**SMALL, "T": 5},))
    return Passed(figure=dict(figure))


def check_masked_self_attention_gradients(student):
    """Gradients of masked_self_attention with respect to X, Wq, Wk and Wv match those of the formula."""

    def prop(dims):
        args = attention_inputs(dims)
        context = f"for {format_call('masked_self_attention', args)}"
        cot = gaussian(dims["seed"] + 5, dims["B"], dims["T"], dims["d_v"])
        reply = _attention(student, args, context, grad_wrt=(0, 1, 2, 3), cotangent=cot)
        leaves = [a.clone().requires_grad_() for a in args]
        want = torch.autograd.grad((reference.masked_self_attention(*leaves) * cot).sum(), leaves)
        if reply.grads is None:
            raise CheckFailed(f"{context}: the result is not differentiable; build it from torch operations on the inputs")
        for got, expected, name in zip(reply.grads, want, ("X", "Wq", "Wk", "Wv")):
            fail_if(compare_arrays(got, expected, name=f"the gradient with respect to {name}", rtol=1e-5, atol=1e-8,
                                   kind="tensor", check_dtype=False), context)

    for_all(strategies.attention_dims(), prop, max_examples=8, examples=(SMALL,))


def check_masked_self_attention_half_precision(student):
    """masked_self_attention works on float16 inputs and returns float16 values close to the exact result."""
    dims = {**SMALL, "T": 6, "seed": 3}
    args = [a.to(torch.float16) for a in attention_inputs(dims)]
    context = f"for float16 inputs {format_call('masked_self_attention', args)}"
    got = _attention(student, args, context).value
    want = reference.masked_self_attention(*[a.to(torch.float64) for a in args]).to(torch.float16)
    fail_if(compare_arrays(got, want, rtol=2e-2, atol=2e-2, kind="tensor"), context)


# --- parameter counts ----------------------------------------------------------------------------------

def _count(module_list) -> int:
    return sum(p.numel() for m in module_list for p in m.parameters())


def _expect_int(value, context):
    if isinstance(value, bool) or not (isinstance(value, int) or isinstance(value, np.integer)):
        raise CheckFailed(f"{context} should return an int; got {describe(value)}")
    return int(value)


def check_qkv_param_count_matches_torch(student):
    """qkv_param_count(d_model, seq_len) equals the parameters of three bias-free d_model x d_model linear layers."""

    def prop(case):
        d_model, seq_len = case
        context = format_call("qkv_param_count", case)
        got = _expect_int(call(student, "qkv_param_count", d_model, seq_len).value, context)
        want = _count([torch.nn.Linear(d_model, d_model, bias=False) for _ in range(3)])
        if got != want:
            raise CheckFailed(f"{context} returned {got}; three bias-free {d_model} x {d_model} projections "
                              f"have {want} parameters")

    for_all(st.tuples(st.integers(1, 32), st.integers(1, 64)), prop, examples=((10, 4),))


def check_mha_param_count_matches_torch(student):
    """mha_param_count(d_model, n_heads, bias) equals the parameter count of torch.nn.MultiheadAttention."""

    def prop(case):
        d_model, n_heads, bias = case
        args = (d_model, n_heads) if bias is None else (d_model, n_heads, bias)
        context = format_call("mha_param_count", args)
        got = _expect_int(call(student, "mha_param_count", *args).value, context)
        want = _count([torch.nn.MultiheadAttention(d_model, n_heads, bias=bias is not False)])
        if got != want:
            raise CheckFailed(f"{context} returned {got}; torch.nn.MultiheadAttention({d_model}, {n_heads}"
                              f"{'' if bias is None else f', bias={bias}'}) has {want} parameters")

    cases = st.tuples(strategies.heads_and_widths(), st.sampled_from([None, True, False])).map(lambda c: (*c[0], c[1]))
    for_all(cases, prop, examples=((8, 2, None), (8, 2, False)))


def check_mha_param_count_rejects_indivisible_heads(student):
    """mha_param_count raises ValueError when n_heads does not divide d_model."""
    for args in ((10, 3), (7, 2)):
        expect_value_error(student, "mha_param_count", args, f"since {args[1]} heads cannot split d_model = {args[0]} evenly")
