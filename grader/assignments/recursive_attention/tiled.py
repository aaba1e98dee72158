"""Checks for tiled_attention: FlashAttention's forward pass, judged by its values within FlashAttention's
error rule (with and without a causal mask), its causality and permutation properties on the student's own
function, and its peak memory measured from outside (grader.assignments.recursive_attention.blockwise has the shared machinery)."""
from __future__ import annotations

import numpy as np
import torch

from grader.checking.base import CheckFailed, Lazy, NotJudged, Passed, call, for_all, format_call
from grader.checking.compare import compare_arrays, describe, kind_of
from grader.checking.gate import Probe
from grader.checking.strategies import gaussian
from grader.checking.templates import Values, check, values
from reference import recursive as ref

from .blockwise import (
    assert_blockwise_memory,
    blocked_attention,
    blockwise_dims,
    blockwise_inputs,
    exact_attention,
    standard_attention,
    within_flash_rule,
)

# --- tiled_attention ------------------------------------------------------------------------------------------


PROBE_TILED_ATTENTION = Probe("tiled_attention", blockwise_dims(),
                              lambda dims: [*blockwise_inputs(dims), dims["block_q"], dims["block_k"]],
                              ref.tiled_attention, {0: "Q", 1: "K", 2: "V"}, per_output=True)


def _tiled_mistakes(Q, K, V, block_k, causal):
    d = Q.shape[-1]
    off = [(lambda: blocked_attention(Q, K, V, block_k, scale=1 / d, causal=causal), "Scale the scores by 1/sqrt(d), not 1/d."),
           (lambda: blocked_attention(Q, K, V, block_k, rescale=False, causal=causal), "When the running max grows, rescale the "
            "running sum and the accumulated output by exp(old max - new max)."),
           (lambda: blocked_attention(Q, K, V, block_k, drop_last=True, causal=causal), "The last key block is shorter when "
            "block_k does not divide Nk: make sure the loop covers it.")]
    if causal:
        off.append((lambda: exact_attention(Q, K, V)[0], "With causal=True query i may attend only to keys j <= i."))
        off.append((lambda: exact_attention(Q, K, V, causal=True, diagonal=2)[0], "The causal mask is off by one: key j = i + 1 "
                    "is in the future of query i; mask j > i, not j > i + 1."))
        off.append((lambda: exact_attention(Q, K, V, causal=True, diagonal=0)[0], "The causal mask is off by one: query i may "
                    "attend to key i itself; mask j > i, not j >= i."))
    return off


def _tiled(student, dims, causal):
    Q, K, V = blockwise_inputs(dims)
    args = [Q, K, V, dims["block_q"], dims["block_k"]]
    context = Lazy(lambda: f"for {format_call('tiled_attention', args)}" + (", causal=True" if causal else ""))
    reply = call(student, "tiled_attention", *args, causal) if causal else call(student, "tiled_attention", *args)
    return (Q, K, V), _pair(reply.value, args, context), context


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
    examples = tuple({"Nq": n, "Nk": n if causal else m, "d": 2, "dv": 2, "block_q": bq, "block_k": bk,
                      "dtype": "float64", "seed": 0} for n, m, bq, bk in ((5, 3, 3, 2), (5, 7, 2, 3), (4, 4, 2, 2)))
    return Values("tiled_attention", lambda: blockwise_dims(causal=causal), _tiled_inputs(causal), _exact_and_baselines,
                  max_examples=8, examples=examples, form=_pair, parts=(("O", 0), ("lse", 1)), compare=_within_flash_rule,
                  show=lambda args: format_call("tiled_attention", args[:5]) + (", causal=True" if len(args) > 5 else ""))


check_tiled_attention_values = check(values, "check_tiled_attention_values", """tiled_attention(Q, K, V, block_q, block_k) returns O = softmax(Q K^T / sqrt(d)) V and its lse, within FlashAttention's error rule.

    Always judged.""", spec=_tiled_values(causal=False))

check_tiled_attention_causal_values = check(values, "check_tiled_attention_causal_values", """tiled_attention(..., causal=True) masks keys after each query and stays within FlashAttention's error rule.

    Always judged.""", spec=_tiled_values(causal=True))


def check_tiled_attention_causality(student):
    """With causal=True, changing key/value j changes no output row i < j.

    Not judged when O is not a tensor with one row per query, or no output row ever depends on an earlier
    key (attention that mixes no positions is trivially causal)."""
    mixes: list[bool] = []

    def prop(dims):
        dims = dict(dims, dtype="float64")
        (Q, K, V), (O, _), context = _tiled(student, dims, True)
        if kind_of(O) != "tensor" or tuple(O.shape) != (dims["Nq"], dims["dv"]):
            raise NotJudged(f"{context} O is {describe(O)}, not a tensor of shape ({dims['Nq']}, {dims['dv']}) "
                            f"(see the values checks)", kind="not_judged")
        n = dims["Nq"]
        influence = np.zeros((n, n), dtype=bool)  # influence[i, j]: row i moved when key/value j moved
        for j in range(n):
            K2, V2 = K.clone(), V.clone()
            K2[j] += gaussian(dims["seed"] + 50 + j, dims["d"])
            V2[j] += gaussian(dims["seed"] + 80 + j, dims["dv"])
            moved = call(student, "tiled_attention", Q, K2, V2, dims["block_q"], dims["block_k"], True).value[0]
            scale = float(O[torch.isfinite(O)].abs().max()) if torch.isfinite(O).any() else 0.0
            change = torch.nan_to_num((moved - O).abs(), nan=0.0) + (torch.isnan(moved) != torch.isnan(O))  # NaN appearing counts
            influence[:, j] = (change.amax(-1) > 1e-12 * (1 + scale)).numpy()
        leaks = [(i, j) for i in range(n) for j in range(i + 1, n) if influence[i, j]]
        if leaks:
            i, j = leaks[0]
            raise CheckFailed(f"{context}: changing key/value {j} changed output row {i} < {j}; {len(leaks)} such pairs "
                              f"leak", figure={"kind": "influence", "T": n, "matrix": influence.astype(int).tolist()},
                              hint="Mask keys j > i inside every tile that crosses the diagonal, using the tile's "
                                   "offsets (q0 + row, k0 + column), and skip tiles entirely in the future.")
        if n > 1:
            mixes.append(bool(any(influence[i, j] for i in range(n) for j in range(i))))

    for_all(blockwise_dims(causal=True), prop, max_examples=4,
            examples=({"Nq": 5, "Nk": 5, "d": 2, "dv": 2, "block_q": 2, "block_k": 3, "dtype": "float64", "seed": 0},))
    if not any(mixes):
        raise NotJudged("no output row ever changed when an earlier key or value changed, so tiled_attention does not "
                        "attend to the past at all; causality pays only for attention that mixes positions")
    return Passed()


def _permuted(student, dims, permute):
    dims = dict(dims, dtype="float64")
    (Q, K, V), (O, lse), context = _tiled(student, dims, False)
    for name, t, n in (("O", O, dims["Nq"]), ("lse", lse, dims["Nq"])):
        if kind_of(t) != "tensor" or t.ndim < 1 or t.shape[0] != n:
            raise NotJudged(f"{context} {name} is {describe(t)} (see the values checks)", kind="not_judged")
    perm = torch.from_numpy(np.random.default_rng(dims["seed"]).permutation(dims[permute]))
    args = [Q[perm], K, V] if permute == "Nq" else [Q, K[perm], V[perm]]
    O2, lse2 = call(student, "tiled_attention", *args, dims["block_q"], dims["block_k"]).value
    return (O, lse), (O2, lse2), perm, context


def check_tiled_attention_query_permutation_equivariance(student):
    """Permuting the queries permutes the rows of O and lse the same way (causal=False).

    Not judged when O or lse is not a tensor with one row per query."""

    def prop(dims):
        (O, lse), (O2, lse2), perm, context = _permuted(student, dims, "Nq")
        for name, a, b in (("O", O[perm], O2), ("lse", lse[perm], lse2)):
            if compare_arrays(b, a, rtol=1e-9, atol=1e-12, check_dtype=False) is not None:
                raise CheckFailed(f"{context}: with the queries permuted by {perm.tolist()}, {name} is not the original "
                                  f"{name} permuted the same way", hint="Each query row must be computed from that "
                                  "query alone; do not let the query blocks share state.")

    for_all(blockwise_dims(), prop, max_examples=5,
            examples=({"Nq": 5, "Nk": 4, "d": 2, "dv": 2, "block_q": 2, "block_k": 3, "dtype": "float64", "seed": 0},))


def check_tiled_attention_key_value_permutation_invariance(student):
    """Permuting the keys and values together changes neither O nor lse (causal=False).

    Not judged when O or lse is not a tensor with one row per query."""

    def prop(dims):
        (O, lse), (O2, lse2), perm, context = _permuted(student, dims, "Nk")
        for name, a, b in (("O", O, O2), ("lse", lse, lse2)):
            if compare_arrays(b, a, rtol=1e-9, atol=1e-12, check_dtype=False) is not None:
                raise CheckFailed(f"{context}: with the keys and values permuted together by {perm.tolist()}, {name} "
                                  f"changed", hint="Without a mask, attention treats the keys as a set: every key "
                                                   "block must count once, whatever its position.")

    for_all(blockwise_dims(), prop, max_examples=5,
            examples=({"Nq": 3, "Nk": 5, "d": 2, "dv": 2, "block_q": 2, "block_k": 2, "dtype": "float64", "seed": 0},))


TILED_MEMORY = {"N": 2896, "d": 4, "block": 256}  # full scores: 64 MiB in float64


def check_tiled_attention_memory(student):
    """tiled_attention never holds the whole N x N score matrix: its peak memory, measured from outside, stays small.

    Not judged when, on the large input, O is not attention and does not change when Q, K or V changes (an
    answer computed without the keys says nothing about memory)."""
    n = TILED_MEMORY
    Q, K, V = blockwise_inputs({"Nq": n["N"], "Nk": n["N"], "d": n["d"], "dv": n["d"], "dtype": "float64", "seed": 6})
    assert_blockwise_memory(student, "tiled_attention", [Q, K, V, n["block"], n["block"]], n["N"] ** 2 * 8,
                            f"({n['N']}, {n['N']})", ref.tiled_attention(Q, K, V, 512, 512)[0], pick=lambda v: v[0],
                            inputs={0: "Q", 1: "K", 2: "V"})
