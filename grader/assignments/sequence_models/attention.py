"""Checks for causal_mask, masked_self_attention and the attention parameter counts."""

from __future__ import annotations

from dataclasses import replace

import torch

import reference
from grader.checking import strategies
from grader.checking.base import (
    CheckFailed,
    Lazy,
    NotJudged,
    StudentErrorAt,
    call,
    expect_value_error,
    fail_if,
    format_call,
)
from grader.checking.compare import compare_arrays, describe, kind_of
from grader.checking.gate import Probe
from grader.checking.positions import Causality, causality
from grader.checking.strategies import attention_inputs, st
from grader.checking.templates import Count, Gradients, Values, check, count, form, gradients, single_example, values

SMALL = {"B": 2, "T": 4, "d": 3, "d_k": 2, "d_v": 2, "seed": 0}


PROBE_CAUSAL_MASK = Probe("causal_mask", st.integers(1, 8), lambda T: [T], reference.causal_mask, {0: "T"})


def _mask_form(got, args, context):
    """A float tensor of shape (T, T), else CheckFailed (of kind type, shape or dtype, the first that differs)."""
    T = args[0]
    if kind_of(got) != "tensor" or tuple(got.shape) != (T, T) or not got.dtype.is_floating_point:
        kind = "type" if kind_of(got) != "tensor" else "shape" if tuple(got.shape) != (T, T) else "dtype"
        raise CheckFailed(f"{context} should be a float tensor of shape ({T}, {T}); got {describe(got)}", kind=kind)
    return got


def _mask_mistakes(T):
    inf = float("-inf")
    return (
        (
            lambda: torch.triu(torch.full((T, T), inf), diagonal=0),
            "Only keys after the query (j > i) are masked: "
            "the diagonal stays 0, so each position sees itself (torch.triu with diagonal=1).",
        ),
        (
            lambda: torch.tril(torch.full((T, T), inf), diagonal=-1),
            "Row i is the query and column j the key: -inf belongs above the diagonal (j > i), not below it.",
        ),
        (
            lambda: torch.triu(torch.full((T, T), -1e9), diagonal=1),
            "Use float('-inf'), not a large negative "
            "number: -1e9 does not fit in float16 and leaves a tiny weight on the future.",
        ),
    )


MASK = Values(
    "causal_mask",
    lambda: st.integers(1, 8),
    lambda T: [T],
    reference.causal_mask,
    max_examples=8,
    examples=(3,),
    rtol=0,
    atol=0,
    kind="tensor",
    check_dtype=False,
    mistakes=_mask_mistakes,
    show=lambda args: f"causal_mask({args[0]})",
)

check_causal_mask_shape_and_dtype = check(
    form,
    "check_causal_mask_shape_and_dtype",
    """causal_mask(T) returns a floating-point torch tensor of shape (T, T).

    Always judged.""",
    spec=replace(MASK, form=_mask_form, lead=""),
    max_examples=8,
)

check_causal_mask_values = check(
    values,
    "check_causal_mask_values",
    """causal_mask(T)[i, j] is 0 where key j <= query i and -inf where j > i.

    Always judged.""",
    spec=MASK,
)


def _attention(student, args, context, **options):
    reply = call(student, "masked_self_attention", *args, **options)
    _attention_form(reply.value, args, context)
    return reply


def _attention_form(got, args, context):
    want_shape = tuple(args[0].shape[:-1]) + (args[3].shape[1],)
    if kind_of(got) != "tensor" or tuple(got.shape) != want_shape:
        raise CheckFailed(f"{context}: the result should be a tensor of shape {want_shape}; got {describe(got)}")
    return got


PROBE_MASKED_SELF_ATTENTION = Probe(
    "masked_self_attention",
    strategies.attention_dims(),
    attention_inputs,
    reference.masked_self_attention,
    {0: "X", 1: "Wq", 2: "Wk", 3: "Wv"},
)


def _attention_mistakes(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    T, d_k = X.shape[-2], Wq.shape[1]
    mask = reference.causal_mask(T).to(X.dtype)
    scores = Q @ K.transpose(-2, -1)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return (
        (lambda: torch.softmax(scores / d_k + mask, -1) @ V, "Scale the scores by 1/sqrt(d_k), not 1/d_k."),
        (lambda: torch.softmax(scores + mask, -1) @ V, "The scores are not scaled: divide Q K^T by sqrt(d_k)."),
        (
            lambda: torch.softmax(scores / d_k**0.5, -1) @ V,
            "The mask is missing: add causal_mask(T) to the scores before the softmax.",
        ),
        (
            lambda: (torch.softmax(scores / d_k**0.5, -1) * ~future) @ V,
            "The mask is applied after the softmax: add it to the scores before, so each row still sums to 1.",
        ),
        (
            lambda: torch.softmax(scores / d_k**0.5 + mask, -2) @ V,
            "The softmax runs over the queries: take it over the keys, the last axis (dim=-1).",
        ),
    )


check_masked_self_attention_values = check(
    values,
    "check_masked_self_attention_values",
    """masked_self_attention computes softmax(Q K^T / sqrt(d_k) + causal_mask(T)) V for a batch (B, T, d).

    Always judged.""",
    spec=Values(
        "masked_self_attention",
        strategies.attention_dims,
        attention_inputs,
        reference.masked_self_attention,
        examples=(SMALL,),
        form=_attention_form,
        mistakes=_attention_mistakes,
    ),
)

check_masked_self_attention_single_sequence = check(
    single_example,
    "check_masked_self_attention_single_sequence",
    """masked_self_attention on a single sequence X of shape (T, d) gives that sequence's row of the batched result.

    Not judged when the batched result is not a tensor with one row per sequence (see the values check).""",
    function="masked_self_attention",
    cases=strategies.attention_dims,
    inputs=attention_inputs,
    single=lambda args, b: [args[0][b], *args[1:]],
    rows=lambda dims: sorted({0, dims["B"] - 1}),
    max_examples=6,
    examples=(SMALL,),
)


check_masked_self_attention_causality = check(
    causality,
    "check_masked_self_attention_causality",
    """Changing the input at position j leaves every output at an earlier position i < j unchanged.

    Not judged when no output ever changes as an earlier position's input changes (attention that mixes no
    positions is trivially causal).""",
    spec=Causality(
        "masked_self_attention",
        strategies.attention_dims,
        attention_inputs,
        lambda dims: dims["seed"],
        max_examples=8,
        examples=({**SMALL, "T": 5},),
        form=_attention_form,
        unjudged="no output ever changed when an earlier position's input changed, so masked_self_attention "
        "does not attend to the past at all (X @ Wv, for one, mixes no positions); causality pays "
        "only for attention that mixes positions",
    ),
)


check_masked_self_attention_gradients = check(
    gradients,
    "check_masked_self_attention_gradients",
    """Gradients of masked_self_attention with respect to X, Wq, Wk and Wv agree with how its output changes.

    Not judged when the result is not a (B, T, d_v) tensor (see the values check).""",
    spec=Gradients(
        "masked_self_attention",
        strategies.attention_dims,
        attention_inputs,
        (0, 1, 2, 3),
        ("X", "Wq", "Wk", "Wv"),
        lambda args: (*args[0].shape[:-1], args[3].shape[1]),
        lambda dims: dims["seed"],
        max_examples=5,
        examples=(SMALL,),
    ),
)


HALF_HINTS = {
    "overflow": "A finite stand-in for -inf such as -1e9 does not fit in float16; use float('-inf') (or causal_mask).",
    "dtype": "Something in your computation is float32 or float64 (the mask?): convert it with .to(scores.dtype).",
}


def check_masked_self_attention_half_precision(student):
    """masked_self_attention works on float16 inputs and returns float16 values close to its own float64 result.

    Not judged when the result on float64 inputs is not a floating-point tensor (see the values check)."""
    dims = {**SMALL, "T": 6, "seed": 3}
    args = [a.to(torch.float16) for a in attention_inputs(dims)]
    context = Lazy(lambda: f"for float16 inputs {format_call('masked_self_attention', args)}")
    exact = call(student, "masked_self_attention", *[a.to(torch.float64) for a in args]).value
    if kind_of(exact) != "tensor" or not exact.dtype.is_floating_point:
        raise NotJudged(
            f"on float64 inputs the result is {describe(exact)}, not a float tensor (see the values check)",
            kind="not_judged",
        )
    try:
        got = _attention(student, args, context).value
    except StudentErrorAt as exc:
        hint = (
            HALF_HINTS["overflow"]
            if "overflow" in exc.message
            else HALF_HINTS["dtype"]
            if any(word in exc.message for word in ("Half", "dtype", "scalar type"))
            else None
        )
        raise CheckFailed(exc.message, kind="raised", hint=hint) from None
    mismatch = compare_arrays(
        got,
        exact.to(torch.float16),
        name="the float16 result (compared with your float64 result)",
        rtol=2e-2,
        atol=2e-2,
        kind="tensor",
    )
    fail_if(mismatch, context, hint=HALF_HINTS["dtype"] if getattr(mismatch, "kind", "") == "dtype" else None)


# --- parameter counts ----------------------------------------------------------------------------------


def _count(module_list) -> int:
    return sum(p.numel() for m in module_list for p in m.parameters())


def _qkv_count_cases():
    return st.tuples(st.integers(1, 32), st.integers(1, 64))


check_qkv_param_count_matches_torch = check(
    count,
    "check_qkv_param_count_matches_torch",
    """qkv_param_count(d_model, seq_len) equals the parameters of three bias-free d_model x d_model linear layers.

    Always judged.""",
    spec=Count(
        "qkv_param_count",
        _qkv_count_cases,
        list,
        lambda case: _count([torch.nn.Linear(case[0], case[0], bias=False) for _ in range(3)]),
        lambda case, want: f"three bias-free {case[0]} x {case[0]} projections have {want} parameters",
        examples=((10, 4),),
    ),
)


PROBE_QKV_PARAM_COUNT = Probe("qkv_param_count", _qkv_count_cases(), list, reference.qkv_param_count, {0: "d_model"})


def _mha_count_cases():
    return st.tuples(strategies.heads_and_widths(), st.sampled_from([None, True, False])).map(lambda c: (*c[0], c[1]))


def _mha_count_args(case) -> list:
    """``[d_model, n_heads]``, with ``bias`` after them unless the case leaves it to its default (None)."""
    return list(case[:2]) if case[2] is None else list(case)


def _mha_count_says(case, want: int) -> str:
    d_model, n_heads, bias = case
    return (
        f"torch.nn.MultiheadAttention({d_model}, {n_heads}{'' if bias is None else f', bias={bias}'}) has {want} "
        "parameters"
    )


check_mha_param_count_matches_torch = check(
    count,
    "check_mha_param_count_matches_torch",
    """mha_param_count(d_model, n_heads, bias) equals the parameter count of torch.nn.MultiheadAttention.

    Always judged.""",
    spec=Count(
        "mha_param_count",
        _mha_count_cases,
        _mha_count_args,
        lambda case: _count([torch.nn.MultiheadAttention(case[0], case[1], bias=case[2] is not False)]),
        _mha_count_says,
        examples=((8, 2, None), (8, 2, False)),
    ),
)


PROBE_MHA_PARAM_COUNT = Probe(
    "mha_param_count",
    _mha_count_cases(),
    _mha_count_args,
    reference.mha_param_count,
    {0: "d_model"},
    move={0: lambda d_model, args: d_model + args[1]},
)


def check_mha_param_count_rejects_indivisible_heads(student):
    """mha_param_count raises ValueError when n_heads does not divide d_model.

    Always judged (it pays only for a function that does real work on valid inputs)."""
    for args in ((10, 3), (7, 2)):
        expect_value_error(
            student, "mha_param_count", args, f"since {args[1]} heads cannot split d_model = {args[0]} evenly"
        )
