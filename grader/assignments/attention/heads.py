"""Checks for multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None).

Values are compared with the reference (tested against ``torch.nn.MultiheadAttention(bias=False)``
with copied weights and its inverted mask); causality under a causal mask, permutation equivariance
without one and the rejection of a width the heads cannot split are judged on the student's own function.
"""

from __future__ import annotations

import math

import torch

from grader.checking.base import expect_value_error
from grader.checking.gate import Probe
from grader.checking.positions import Causality, Permutation, causality, over_positions, permutation_equivariance
from grader.checking.strategies import gaussian, st
from grader.checking.templates import Values, check, values
from reference import transformer as ref

from .sdpa import allowed_mask

NAME = "multi_head_attention"


def mha_inputs(case) -> list:
    """``[X, Wq, Wk, Wv, Wo, n_heads]`` (+ ``mask``) for ``(batched, N, H, Dh, mask_kind, seed)``; D = H * Dh."""
    batched, N, H, Dh, kind, seed = case
    D = H * Dh
    X = gaussian(seed, *((2,) if batched else ()), N, D)
    args = [X, *(gaussian(seed + k, D, D) / math.sqrt(D) * 1.5 for k in (1, 2, 3, 4)), H]
    if kind == "causal":
        args.append(torch.ones(N, N, dtype=torch.bool).tril())
    elif kind == "random":
        args.append(allowed_mask(seed + 5, (N, N)))
    return args


def mha_cases(*, masks=("none", "causal", "random"), min_n: int = 1, min_heads: int = 1):
    return st.tuples(
        st.booleans(),
        st.integers(min_n, 4),
        st.integers(min_heads, 3),
        st.integers(1, 2),
        st.sampled_from(masks),
        st.integers(0, 2**16),
    )


SMALL = (False, 3, 2, 2, "causal", 0)


PROBE_MULTI_HEAD_ATTENTION = Probe(
    NAME,
    mha_cases(),
    mha_inputs,
    ref.multi_head_attention,
    {0: "X", 1: "Wq", 2: "Wk", 3: "Wv", 4: "Wo", 6: "mask"},
    count=6,
)


def _variant(
    X, Wq, Wk, Wv, Wo, H, mask=None, *, split="heads_first", scale=None, inverted=False, out=True, concat="ordered"
):
    """multi_head_attention written with one known mistake (for hints)."""
    Xb = X if X.ndim == 3 else X[None]  # (B, N, D)
    B, N, D = Xb.shape
    Dh = Wq.shape[1] // H

    def heads(W):
        P = Xb @ W  # (B, N, H*Dh)
        if split == "heads_first":
            return P.view(B, N, H, Dh).transpose(1, 2)  # (B, H, N, Dh)
        return P.view(B, N, Dh, H).permute(0, 3, 1, 2)  # (B, H, N, Dh), columns taken with stride H

    Q, K, V = heads(Wq), heads(Wk), heads(Wv)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(scale or Dh)  # (B, H, N, N)
    if mask is not None:
        scores = scores.masked_fill(mask if inverted else ~mask, float("-inf"))
    Y = torch.softmax(scores, -1) @ V  # (B, H, N, Dh)
    Y = Y.transpose(1, 2).reshape(B, N, H * Dh) if concat == "ordered" else Y.reshape(B, N, H * Dh)
    Y = Y @ Wo if out else Y
    return Y if X.ndim == 3 else Y[0]


def _mistakes(args):
    D = args[0].shape[-1]
    return [
        (
            lambda: _variant(*args, split="dims_first"),
            "Head h takes the columns h*Dh:(h+1)*Dh of X @ Wq: reshape "
            "(B, N, H*Dh) to (B, N, H, Dh), then move H forward; (B, N, Dh, H) picks the wrong columns.",
        ),
        (
            lambda: _variant(*args, concat="mixed"),
            "Move the heads axis back next to Dh (transpose(1, 2)) before "
            "reshaping to (B, N, H*Dh): reshaping (B, H, N, Dh) directly mixes positions and heads.",
        ),
        (lambda: _variant(*args, scale=D), "Scale each head's scores by 1/sqrt(Dh), the head width, not 1/sqrt(D)."),
        (
            lambda: _variant(*args, inverted=True),
            "The mask is inverted: True means 'may attend' here "
            "(torch.nn.MultiheadAttention uses the opposite convention).",
        ),
        (lambda: _variant(*args, out=False), "The heads' concatenated outputs still go through Wo."),
    ]


check_mha_values = check(
    values,
    "check_mha_values",
    """multi_head_attention equals torch.nn.MultiheadAttention(bias=False) with the same weights, heads taking columns
    in order.

    Always judged.""",
    spec=Values(
        NAME,
        mha_cases,
        mha_inputs,
        ref.multi_head_attention,
        max_examples=6,
        examples=(SMALL, (False, 4, 2, 1, "none", 1)),
        mistakes=lambda *args: _mistakes(list(args)),
    ),
)


check_mha_causality = check(
    causality,
    "check_mha_causality",
    """With a causal mask (True where key j <= query i), changing the input at position j leaves every output at i < j
    unchanged.

    Not judged when the result is not a tensor shaped like X, or when no output ever changes as an earlier
    position's input changes (attention that mixes no positions is trivially causal).""",
    spec=Causality(
        NAME, lambda: mha_cases(masks=("causal",), min_n=2), mha_inputs, lambda case: case[-1], examples=(SMALL,)
    ),
)

check_mha_permutation_equivariance = check(
    permutation_equivariance,
    "check_mha_permutation_equivariance",
    """Without a mask, reordering the positions of X reorders the rows of the result the same way.

    Not judged when the result is not a tensor shaped like X, or when no output position ever changes as another
    position's input changes (nothing is mixed, so nothing can be reordered).""",
    spec=Permutation(
        NAME,
        lambda: mha_cases(masks=("none",), min_n=2),
        mha_inputs,
        lambda case: case[-1],
        examples=((False, 3, 2, 1, "none", 0),),
        **over_positions(NAME, "positions of X"),
    ),
)


def check_mha_rejects_indivisible_heads(student):
    """multi_head_attention raises ValueError when n_heads does not divide the width D.

    Always judged (it pays only for a function that does real work on valid inputs)."""
    for D, H in ((6, 4), (5, 2)):
        X, W = gaussian(3, 3, D), gaussian(4, D, D)
        expect_value_error(student, NAME, (X, W, W, W, W, H), f"since {H} heads cannot split D = {D} evenly")
