"""Checks for attention_partial: the partial attention state (s, v) of a query over a key set
(grader.assignments.recursive_attention.partial_states), its shapes, values, empty key sets and large scores."""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from grader.checking.base import Lazy, call, for_all, format_call
from grader.checking.gate import Probe
from grader.checking.templates import Values, check, form, values
from reference import recursive as ref

from .partial_states import _state, compare_state, partial_dims, partial_inputs

PROBE_ATTENTION_PARTIAL = Probe(
    "attention_partial", partial_dims(), partial_inputs, ref.attention_partial, {0: "q", 1: "K", 2: "V"}
)


def _partial_mistakes(q, K, V):
    d = q.shape[-1]
    raw = q @ K.transpose(-2, -1)  # (Nk,) or (Nq, Nk)

    def state(scores):
        return torch.logsumexp(scores, -1), torch.softmax(scores, -1) @ V

    return (
        (lambda: state(raw / d), "Scale the scores by 1/sqrt(d), not 1/d."),
        (lambda: state(raw), "The scores are not scaled: divide q K^T by sqrt(d)."),
        (
            lambda: (torch.amax(raw / math.sqrt(d), -1), state(raw / math.sqrt(d))[1]),
            "s is the log-sum-exp of the scaled scores (torch.logsumexp), not their maximum.",
        ),
        (
            lambda: (torch.exp(raw / math.sqrt(d)).sum(-1), state(raw / math.sqrt(d))[1]),
            "s is the log of the sum of exponentials: take the log (torch.logsumexp does both stably).",
        ),
    )


def _state_form(got, args, context):
    """The student's (s, v), two tensors shaped like the reference's (else CheckFailed)."""
    return _state(got, context, ref.attention_partial(*args))


ONE_QUERY, QUERIES = {"Nq": 0, "Nk": 3, "d": 2, "dv": 2, "seed": 0}, {"Nq": 2, "Nk": 3, "d": 2, "dv": 3, "seed": 0}
PARTIAL = Values(
    "attention_partial",
    partial_dims,
    partial_inputs,
    ref.attention_partial,
    max_examples=10,
    examples=(ONE_QUERY,),
    compare=lambda got, want, args, context, name: compare_state(got, want, context, mistakes=_partial_mistakes(*args)),
)

check_attention_partial_shapes = check(
    form,
    "check_attention_partial_shapes",
    """attention_partial returns tensors s of shape () or (Nq,) and v of shape (dv,) or (Nq, dv).

    Always judged.""",
    spec=replace(PARTIAL, form=_state_form),
    max_examples=6,
    examples=(ONE_QUERY, QUERIES),
)

check_attention_partial_values = check(
    values,
    "check_attention_partial_values",
    """attention_partial gives s = logsumexp(q K^T / sqrt(d)) and v = softmax(q K^T / sqrt(d)) V.

    Always judged.""",
    spec=PARTIAL,
)


def check_attention_partial_empty_keys(student):
    """With no keys (K of shape (0, d)), attention_partial returns the empty state s = -inf, v = 0.

    Always judged (it pays only for a function that does real work on keys it is given)."""

    def prop(dims):
        args = partial_inputs(dims)
        context = Lazy(lambda: f"for {format_call('attention_partial', args)} (no keys)")
        compare_state(
            call(student, "attention_partial", *args).value,
            ref.attention_partial(*args),
            context,
            hint="With no keys there is nothing to average: return s = -inf and v = zeros, without dividing 0 by 0.",
        )

    for_all(
        partial_dims(min_keys=0, max_keys=0),
        prop,
        max_examples=4,
        examples=({"Nq": 0, "Nk": 0, "d": 2, "dv": 2, "seed": 0}, {"Nq": 2, "Nk": 0, "d": 2, "dv": 3, "seed": 0}),
    )


def check_attention_partial_large_scores(student):
    """attention_partial stays finite and correct when the scores are around 1e4 (no overflow).

    Always judged."""

    def prop(dims):
        args = partial_inputs(dims, scale=1e4)
        context = Lazy(lambda: f"for {format_call('attention_partial', args)} (scores around 1e4)")
        compare_state(
            call(student, "attention_partial", *args).value,
            ref.attention_partial(*args),
            context,
            hint="exp(1e4) overflows: subtract the largest score before exponentiating "
            "(torch.logsumexp and torch.softmax do this for you).",
        )

    for_all(partial_dims(), prop, max_examples=4, examples=({"Nq": 2, "Nk": 3, "d": 2, "dv": 2, "seed": 3},))
