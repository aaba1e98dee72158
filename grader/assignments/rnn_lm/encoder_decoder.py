"""Checks for encoder_decoder_context: C = softmax(S H^T) H, its convex rows, and encoder-order invariance."""

from __future__ import annotations

import torch

from grader.checking.base import CheckFailed, Lazy, call, fail_if, for_all, format_call
from grader.checking.compare import ATOL, RTOL, compare_arrays, describe, kind_of
from grader.checking.gate import Probe
from grader.checking.positions import Part, Permutation, permutation_equivariance, reversed_if_identity
from grader.checking.strategies import gaussian, st
from grader.checking.templates import Values, check, form, values
from reference import rnn_lm

SMALL = {"T_dec": 2, "T_enc": 3, "d": 2, "seed": 0}


def attention_sizes():
    """Decoder length T_dec, encoder length T_enc, state width d, and a seed."""
    return st.fixed_dictionaries(
        {"T_dec": st.integers(1, 4), "T_enc": st.integers(1, 5), "d": st.integers(1, 4), "seed": st.integers(0, 2**16)}
    )


def states(dims: dict) -> list[torch.Tensor]:
    """``[S (T_dec, d), H (T_enc, d)]`` in float64."""
    return [gaussian(dims["seed"], dims["T_dec"], dims["d"]), gaussian(dims["seed"] + 1, dims["T_enc"], dims["d"])]


def _context(student, args, context) -> torch.Tensor:
    return _form(call(student, "encoder_decoder_context", *args).value, args, context)


def _form(got, args, context) -> torch.Tensor:
    want_shape = (args[0].shape[0], args[1].shape[1])
    if kind_of(got) != "tensor":
        raise CheckFailed(f"{context}: the result should be a torch tensor; got {describe(got)}", kind="type")
    if tuple(got.shape) != want_shape:
        raise CheckFailed(
            f"{context}: the result has shape {tuple(got.shape)}; expected (T_dec, d) = {want_shape}", kind="shape"
        )
    if got.dtype != args[0].dtype:
        raise CheckFailed(f"{context}: the result has dtype {got.dtype}; expected {args[0].dtype}", kind="dtype")
    return got.detach()


PROBE_ENCODER_DECODER_CONTEXT = Probe(
    "encoder_decoder_context", attention_sizes(), states, rnn_lm.encoder_decoder_context, {0: "S", 1: "H"}
)


def _mistakes(S, H):
    scores = S @ H.T  # (T_dec, T_enc)
    return (
        (
            lambda: torch.softmax(scores, dim=0) @ H,
            "The softmax runs over the decoder positions: take it over the "
            "encoder positions (the last axis, dim=-1), so each decoder state's weights sum to 1.",
        ),
        (lambda: scores @ H, "The softmax is missing: the weights are softmax(S H^T), not S H^T."),
        (
            lambda: torch.softmax(scores / S.shape[1] ** 0.5, dim=-1) @ H,
            "This exercise does not scale the scores: C = softmax(S H^T) H, without 1/sqrt(d).",
        ),
        (
            lambda: torch.softmax(H @ S.T, dim=-1).T @ H,
            "The scores are S H^T with one row per decoder state; take the softmax over each row.",
        ),
    )


CONTEXT = Values(
    "encoder_decoder_context",
    attention_sizes,
    states,
    rnn_lm.encoder_decoder_context,
    max_examples=8,
    examples=(SMALL,),
    form=_form,
    mistakes=_mistakes,
)

check_encoder_decoder_context_shape = check(
    form,
    "check_encoder_decoder_context_shape",
    """encoder_decoder_context returns a tensor of shape (T_dec, d) in the inputs' dtype.

    Always judged.""",
    spec=CONTEXT,
)

check_encoder_decoder_context_values = check(
    values,
    "check_encoder_decoder_context_values",
    """encoder_decoder_context(S, H) equals softmax(S H^T) H, the softmax over the encoder positions.

    Always judged.""",
    spec=CONTEXT,
)


def check_encoder_decoder_context_weights_sum_to_one(student):
    """When every encoder state is the same vector v, every context vector is v (the weights of a row sum to 1).

    Not judged when the result is not a (T_dec, d) tensor in the inputs' dtype (the shape check charges that)."""

    def prop(dims):
        S, H = states(dims)
        v = H[:1]  # (1, d)
        same = v.expand_as(H).clone()  # (T_enc, d): every encoder state equals v
        args = [S, same]
        context = Lazy(lambda: f"for {format_call('encoder_decoder_context', args)}")
        got = _context(student, args, context)
        fail_if(
            compare_arrays(got, v.expand_as(got), name="the context vectors", rtol=RTOL, atol=ATOL),
            context + "; when every encoder state is the same vector v, a weighted average of them is v",
        )

    for_all(attention_sizes(), prop, max_examples=4, examples=(SMALL,))


check_encoder_decoder_context_encoder_order = check(
    permutation_equivariance,
    "check_encoder_decoder_context_encoder_order",
    """Reordering the encoder states leaves the context vectors unchanged.

    Not judged when the result is not a (T_dec, d) tensor in the inputs' dtype (the shape check charges that).""",
    spec=Permutation(
        "encoder_decoder_context",
        attention_sizes,
        states,
        lambda dims: dims["seed"],
        max_examples=4,
        examples=({**SMALL, "T_enc": 4},),
        arguments=(1,),
        axis=0,
        permutation=reversed_if_identity,
        form=_form,
        parts=(
            Part(axis=None, expected="; attention weighs the encoder states by their scores, not by their positions"),
        ),
        context="for {call} and H reordered as {perm}",
        label="the context for the reordered H",
    ),
)
