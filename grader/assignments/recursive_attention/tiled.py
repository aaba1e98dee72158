"""Checks for tiled_attention: FlashAttention's forward pass, judged by its values within FlashAttention's
error rule (with and without a causal mask), its causality and permutation properties on the student's own
function, and its peak memory measured from outside (grader.assignments.recursive_attention.blockwise has the
shared machinery)."""

from __future__ import annotations

import torch

from grader.checking.base import CheckFailed, NotJudged, format_call
from grader.checking.compare import describe, kind_of
from grader.checking.gate import Probe
from grader.checking.positions import Causality, Permutation, any_permutation, causality, permutation_equivariance
from grader.checking.templates import Values, check, values
from reference import recursive as ref

from .blockwise import (
    KEY_ORDER,
    QUERY_ORDER,
    assert_blockwise_memory,
    blocked_attention,
    blockwise_dims,
    blockwise_inputs,
    exact_attention,
    standard_attention,
    within_flash_rule,
)

# --- tiled_attention ------------------------------------------------------------------------------------------


PROBE_TILED_ATTENTION = Probe(
    "tiled_attention",
    blockwise_dims(),
    lambda dims: [*blockwise_inputs(dims), dims["block_q"], dims["block_k"]],
    ref.tiled_attention,
    {0: "Q", 1: "K", 2: "V"},
    per_output=True,
)


def _tiled_mistakes(Q, K, V, block_k, causal):
    d = Q.shape[-1]
    off = [
        (
            lambda: blocked_attention(Q, K, V, block_k, scale=1 / d, causal=causal),
            "Scale the scores by 1/sqrt(d), not 1/d.",
        ),
        (
            lambda: blocked_attention(Q, K, V, block_k, rescale=False, causal=causal),
            "When the running max grows, rescale the running sum and the accumulated output by exp(old max - new max).",
        ),
        (
            lambda: blocked_attention(Q, K, V, block_k, drop_last=True, causal=causal),
            "The last key block is shorter when block_k does not divide Nk: make sure the loop covers it.",
        ),
    ]
    if causal:
        off.append((lambda: exact_attention(Q, K, V)[0], "With causal=True query i may attend only to keys j <= i."))
        off.append(
            (
                lambda: exact_attention(Q, K, V, causal=True, diagonal=2)[0],
                "The causal mask is off by one: key j = i + 1 is in the future of query i; mask j > i, not j > i + 1.",
            )
        )
        off.append(
            (
                lambda: exact_attention(Q, K, V, causal=True, diagonal=0)[0],
                "The causal mask is off by one: query i may attend to key i itself; mask j > i, not j >= i.",
            )
        )
    return off


def _pair(got, args, context):
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise CheckFailed(f"{context}: should return a pair (O, lse); got {describe(got)}", kind="type")
    return got


def _tiled_inputs(causal):
    def inputs(dims):
        return [*blockwise_inputs(dims), dims["block_q"], dims["block_k"], *([True] if causal else [])]

    return inputs


def _exact_and_baselines(Q, K, V, block_q, block_k, causal=False):
    """Per part (O, lse): the float64 value and the same computed other ways in the inputs' dtype."""
    exact, standard = exact_attention(Q, K, V, causal), standard_attention(Q, K, V, causal)
    fused = ref.tiled_attention(Q, K, V, block_q, block_k, causal)
    return tuple((exact[i], [standard[i], fused[i]]) for i in range(2))


def _within_flash_rule(got, want, args, context, name):
    Q, K, V, _, block_k = args[:5]
    mistakes = _tiled_mistakes(Q, K, V, block_k, len(args) > 5) if name == "O" else ()
    within_flash_rule(name, got, *want, context, mistakes, Q.dtype)


def _tiled_values(causal):
    examples = tuple(
        {
            "Nq": n,
            "Nk": n if causal else m,
            "d": 2,
            "dv": 2,
            "block_q": bq,
            "block_k": bk,
            "dtype": "float64",
            "seed": 0,
        }
        for n, m, bq, bk in ((5, 3, 3, 2), (5, 7, 2, 3), (4, 4, 2, 2))
    )
    return Values(
        "tiled_attention",
        lambda: blockwise_dims(causal=causal),
        _tiled_inputs(causal),
        _exact_and_baselines,
        max_examples=8,
        examples=examples,
        form=_pair,
        parts=(("O", 0), ("lse", 1)),
        compare=_within_flash_rule,
        show=lambda args: format_call("tiled_attention", args[:5]) + (", causal=True" if len(args) > 5 else ""),
    )


check_tiled_attention_values = check(
    values,
    "check_tiled_attention_values",
    """tiled_attention(Q, K, V, block_q, block_k) returns O = softmax(Q K^T / sqrt(d)) V and its lse, within
    FlashAttention's error rule.

    Always judged.""",
    spec=_tiled_values(causal=False),
)

check_tiled_attention_causal_values = check(
    values,
    "check_tiled_attention_causal_values",
    """tiled_attention(..., causal=True) masks keys after each query and stays within FlashAttention's error rule.

    Always judged.""",
    spec=_tiled_values(causal=True),
)


def _float64(causal):
    def inputs(dims):
        return _tiled_inputs(causal)(dict(dims, dtype="float64"))

    return inputs


def _output(value, args, context) -> torch.Tensor:
    """O, a tensor with one row per query (else not judged)."""
    O, _ = _pair(value, args, context)
    shape = (args[0].shape[0], args[2].shape[1])  # (Nq, dv)
    if kind_of(O) != "tensor" or tuple(O.shape) != shape:
        raise NotJudged(
            f"{context} O is {describe(O)}, not a tensor of shape {shape} (see the values checks)", kind="not_judged"
        )
    return O


check_tiled_attention_causality = check(
    causality,
    "check_tiled_attention_causality",
    """With causal=True, changing key/value j changes no output row i < j.

    Not judged when O is not a tensor with one row per query, or no output row ever depends on an earlier
    key (attention that mixes no positions is trivially causal).""",
    spec=Causality(
        "tiled_attention",
        lambda: blockwise_dims(causal=True),
        _float64(True),
        lambda dims: dims["seed"],
        max_examples=4,
        examples=({"Nq": 5, "Nk": 5, "d": 2, "dv": 2, "block_q": 2, "block_k": 3, "dtype": "float64", "seed": 0},),
        arguments=(1, 2),
        axis=0,
        offsets=(50, 80),
        form=_output,
        moved_form=lambda value, args, context: value[0],
        out_axis=0,
        nan_moves=True,
        figure="failure",
        leak="{context}: changing key/value {j} changed output row {i} < {j}; {count} such pairs leak",
        hint="Mask keys j > i inside every tile that crosses the diagonal, using the tile's offsets "
        "(q0 + row, k0 + column), and skip tiles entirely in the future.",
        unjudged="no output row ever changed when an earlier key or value changed, so tiled_attention does "
        "not attend to the past at all; causality pays only for attention that mixes positions",
        show=lambda args: format_call("tiled_attention", args[:5]) + ", causal=True",
    ),
)


def _rows(value, args, context) -> tuple:
    """(O, lse), each a tensor with one row per query (else not judged)."""
    O, lse = _pair(value, args, context)
    for name, t in (("O", O), ("lse", lse)):
        if kind_of(t) != "tensor" or t.ndim < 1 or t.shape[0] != args[0].shape[0]:
            raise NotJudged(f"{context} {name} is {describe(t)} (see the values checks)", kind="not_judged")
    return O, lse


def _unpacked(value, args, context) -> tuple:
    O, lse = value
    return O, lse


def _permuted(**spec) -> Permutation:
    """tiled_attention (causal=False) with the queries, or the keys and values, reordered; O and lse judged."""
    return Permutation(
        "tiled_attention",
        blockwise_dims,
        _float64(False),
        lambda dims: dims["seed"],
        max_examples=5,
        axis=0,
        permutation=any_permutation,
        form=_rows,
        moved_form=_unpacked,
        rtol=1e-9,
        atol=1e-12,
        check_dtype=False,
        **spec,
    )


check_tiled_attention_query_permutation_equivariance = check(
    permutation_equivariance,
    "check_tiled_attention_query_permutation_equivariance",
    """Permuting the queries permutes the rows of O and lse the same way (causal=False).

    Not judged when O or lse is not a tensor with one row per query.""",
    spec=_permuted(
        examples=({"Nq": 5, "Nk": 4, "d": 2, "dv": 2, "block_q": 2, "block_k": 3, "dtype": "float64", "seed": 0},),
        **QUERY_ORDER,
        hint="Each query row must be computed from that query alone; do not let the query blocks share state.",
    ),
)

check_tiled_attention_key_value_permutation_invariance = check(
    permutation_equivariance,
    "check_tiled_attention_key_value_permutation_invariance",
    """Permuting the keys and values together changes neither O nor lse (causal=False).

    Not judged when O or lse is not a tensor with one row per query.""",
    spec=_permuted(
        examples=({"Nq": 3, "Nk": 5, "d": 2, "dv": 2, "block_q": 2, "block_k": 2, "dtype": "float64", "seed": 0},),
        **KEY_ORDER,
        hint="Without a mask, attention treats the keys as a set: every key block must count once, "
        "whatever its position.",
    ),
)


TILED_MEMORY = {"N": 2896, "d": 4, "block": 256}  # full scores: 64 MiB in float64


def check_tiled_attention_memory(student):
    """tiled_attention never holds the whole N x N score matrix: its peak memory, measured from outside, stays small.

    Not judged when, on the large input, O is not attention and does not change when Q, K or V changes (an
    answer computed without the keys says nothing about memory)."""
    n = TILED_MEMORY
    Q, K, V = blockwise_inputs({"Nq": n["N"], "Nk": n["N"], "d": n["d"], "dv": n["d"], "dtype": "float64", "seed": 6})
    assert_blockwise_memory(
        student,
        "tiled_attention",
        [Q, K, V, n["block"], n["block"]],
        n["N"] ** 2 * 8,
        f"({n['N']}, {n['N']})",
        ref.tiled_attention(Q, K, V, 512, 512)[0],
        pick=lambda v: v[0],
        inputs={0: "Q", 1: "K", 2: "V"},
    )
