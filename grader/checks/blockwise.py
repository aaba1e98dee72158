"""Checks for online_softmax_attention and tiled_attention: attention computed block by block.

Values are judged against attention computed in float64 with FlashAttention's rule (the error may be
at most twice that of standard attention computed in the input's dtype, or of the fused reference,
plus a small floor). Memory is measured by the grader from outside the student's process: the peak of
the resident memory of the process tree during one call on inputs whose full score matrix would take
far more than the call's allowance, while a block of it takes far less.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from reference import recursive as ref

from ..compare import compare_arrays, describe, kind_of
from ..strategies import gaussian, st
from .base import CheckFailed, Lazy, NotJudged, Passed, call, diagnose, for_all, format_call
from .properties import degeneracy, ignored_input

MiB = 2**20
# What one call may hold beyond what its process held before: a block of scores takes about 1 MiB, the
# whole matrix 64 MiB and its softmax as much again; honest blockwise code peaked at 6-25 MiB here (the
# allocator keeps freed blocks), so the allowance sits well between.
MEMORY_ALLOWANCE = 40 * MiB


# --- the inputs ------------------------------------------------------------------------------------------


@st.composite
def blockwise_dims(draw, *, causal: bool = False, single_query: bool = False):
    """Sizes for blockwise attention: queries, keys (equal when causal), widths, the two block sizes
    (drawn independently: larger than, equal to, smaller than each other and not dividing N), the dtype."""
    n_q = draw(st.integers(1, 10))
    return {"Nq": 0 if single_query and draw(st.booleans()) else n_q, "Nk": n_q if causal else draw(st.integers(1, 10)),
            "d": draw(st.integers(1, 5)), "dv": draw(st.integers(1, 4)), "block_q": draw(st.integers(1, 6)),
            "block_k": draw(st.integers(1, 6)), "dtype": draw(st.sampled_from(["float32", "float64"])),
            "seed": draw(st.integers(0, 2**16))}


def blockwise_inputs(dims: dict, *, scale: float = 1.0) -> list[torch.Tensor]:
    """``[Q, K, V]`` in the drawn dtype (Q of shape (d,) when Nq is 0)."""
    dtype = getattr(torch, dims.get("dtype", "float64"))
    seed, d = dims["seed"], dims["d"]
    Q = gaussian(seed, *((dims["Nq"], d) if dims["Nq"] else (d,))) * scale
    return [t.to(dtype) for t in (Q, gaussian(seed + 1, dims["Nk"], d), gaussian(seed + 2, dims["Nk"], dims["dv"]))]


def _rows(Q):
    return Q if Q.ndim == 2 else Q[None]  # (Nq, d)


def _attention(Q, K, V, causal=False, diagonal=1, dtype=None):
    """Attention and its log-sum-exp computed in ``dtype`` (the inputs' own by default). With ``causal``,
    keys j >= i + diagonal are masked (diagonal = 1 is the right mask)."""
    Q, K, V = (t.to(dtype) for t in (Q, K, V)) if dtype is not None else (Q, K, V)
    scores = (_rows(Q) @ K.T) / math.sqrt(Q.shape[-1])  # (Nq, Nk)
    if causal:
        scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(diagonal), float("-inf"))
    return torch.softmax(scores, -1) @ V, torch.logsumexp(scores, -1)  # (Nq, dv), (Nq,)


def _exact(Q, K, V, causal=False, diagonal=1):
    """Attention and its log-sum-exp in float64: the values everything is judged against."""
    return _attention(Q, K, V, causal, diagonal, torch.float64)


def _standard(Q, K, V, causal=False):
    """Standard attention in the inputs' own dtype: the error it makes sets the tolerance."""
    return _attention(Q, K, V, causal)


# --- judging values with FlashAttention's rule ------------------------------------------------------------


def _within_flash_rule(name: str, got, exact, baselines, context, mistakes, dtype) -> None:
    """``got`` (the input's dtype, the exact value's shape) errs at most twice as much as the worst of
    ``baselines`` (the same quantity computed other ways in the input's dtype), plus a floor."""
    if kind_of(got) != "tensor":
        raise CheckFailed(f"{context}: {name} should be a torch tensor; got {describe(got)}", kind="type")
    if tuple(got.shape) != tuple(exact.shape):
        raise CheckFailed(f"{context}: {name} should have shape {tuple(exact.shape)}; got {tuple(got.shape)}", kind="shape")
    if got.dtype != dtype:
        raise CheckFailed(f"{context}: {name} has dtype {got.dtype}; expected {dtype} (the dtype of the inputs)", kind="dtype")
    finite = torch.isfinite(exact)
    g = got.detach().double()
    same_inf = (g == exact) | (torch.isnan(g) & torch.isnan(exact))
    err = torch.where(finite, (g - exact).abs(), torch.where(same_inf, 0.0, math.inf))
    err = torch.nan_to_num(err, nan=math.inf)
    worst = max((float(torch.where(finite, (b.double() - exact).abs(), 0.0).max()) for b in baselines), default=0.0)
    floor = 8 * torch.finfo(dtype).eps * (1 + float(torch.where(finite, exact.abs(), 0.0).max()))
    allowed = 2 * worst + floor
    if float(err.max()) <= allowed:
        return
    at = np.unravel_index(int(torch.argmax(err)), tuple(err.shape))
    where = f" at index {tuple(int(i) for i in at)}" if at else ""
    raise CheckFailed(
        f"{context}: {name} is off by up to {float(err.max()):.3g}{where} (expected {float(exact[at]):.6g}, got "
        f"{float(g[at]):.6g}); FlashAttention's rule allows {allowed:.3g} here: twice the error of standard "
        f"attention computed in {str(dtype).replace('torch.', '')} ({worst:.3g}) plus a floor of {floor:.3g}",
        hint=diagnose(got, mistakes, rtol=1e-4, atol=1e-6) if mistakes else None)


# --- known mistakes, for hints ----------------------------------------------------------------------------


def _blocked(Q, K, V, block_k, *, rescale=True, drop_last=False, scale=None, causal=False):
    """The one-pass algorithm in float64, optionally with a known mistake, for recognising it."""
    Q2, K, V = _rows(Q).double(), K.double(), V.double()
    scale = 1 / math.sqrt(Q2.shape[-1]) if scale is None else scale
    m = torch.full((Q2.shape[0],), -math.inf, dtype=torch.float64)
    total = torch.zeros(Q2.shape[0], dtype=torch.float64)
    acc = torch.zeros(Q2.shape[0], V.shape[-1], dtype=torch.float64)
    stop = (K.shape[0] // block_k) * block_k if drop_last else K.shape[0]
    for k0 in range(0, stop, block_k):
        s = Q2 @ K[k0:k0 + block_k].T * scale  # (Nq, b)
        if causal:
            s = s.masked_fill(torch.arange(k0, k0 + s.shape[1])[None] > torch.arange(Q2.shape[0])[:, None], -math.inf)
        m_new = torch.maximum(m, s.amax(-1))
        safe = torch.where(torch.isinf(m_new), 0.0, m_new)
        alpha = torch.exp(m - safe) if rescale else torch.ones_like(m)
        p = torch.exp(s - safe[:, None])
        total, acc, m = total * alpha + p.sum(-1), acc * alpha[:, None] + p @ V[k0:k0 + block_k], m_new
    out = acc / total[:, None]
    return out if Q.ndim == 2 else out[0]


def _online_mistakes(Q, K, V, block):
    d = Q.shape[-1]
    return ((lambda: _blocked(Q, K, V, block, scale=1 / d), "Scale the scores by 1/sqrt(d), not 1/d."),
            (lambda: _blocked(Q, K, V, block, rescale=False), "When the running max grows, rescale the running sum and "
             "the weighted sum accumulated so far by exp(old max - new max)."),
            (lambda: _blocked(Q, K, V, block, drop_last=True), "The last block is shorter when block_size does not divide "
             "the number of keys: range(0, Nk, block_size) with slices K[start:start + block_size] covers it."))


# --- memory, measured from outside -------------------------------------------------------------------------


def assert_blockwise_memory(student, name: str, args: list, score_bytes: int, what: str, want, pick=lambda v: v) -> None:
    """One call on ``args`` holds at most MEMORY_ALLOWANCE beyond its inputs, where the full score matrix
    takes ``score_bytes``; scores a stand-in computed for the call (attention_partial over many keys) count
    as held by it. It pays only when the call's result (``pick(value)``) is ``want``: a function that
    computes something else on large inputs says nothing about how attention uses memory."""
    reply = call(student, name, *args, measure_memory=True)
    if reply.peak_bytes is None:
        raise RuntimeError("this machine does not let seqgrade measure a call's memory (/proc/PID/clear_refs)")
    try:
        got = pick(reply.value)
    except (TypeError, IndexError, KeyError):
        got = reply.value
    if compare_arrays(got, want, rtol=1e-7, atol=1e-10) is not None:
        raise NotJudged(f"the result of {format_call(name, args)} is not attention over those inputs (see the values "
                        f"checks), so its memory use is not judged", kind="not_judged")
    served = [int(np.prod(s.shapes[0][:-1] or (1,))) * int(s.shapes[1][0]) * 8
              for s in reply.served if s.name == "attention_partial" and len(s.shapes) == 3 and s.shapes[1]]
    held = max([reply.peak_bytes, *served])
    if held > MEMORY_ALLOWANCE:
        by = " (counting the scores attention_partial computed for it)" if served and max(served) >= reply.peak_bytes else ""
        raise CheckFailed(
            f"{format_call(name, args)} held {held / MiB:.0f} MiB at its peak{by}, measured by the grader from outside "
            f"your process; the full {what} score matrix takes {score_bytes / MiB:.0f} MiB, one block of it about "
            f"1 MiB, and the allowance is {MEMORY_ALLOWANCE / MiB:.0f} MiB. Your function builds the whole score "
            f"matrix (or something as large) at once.", kind="values",
            hint="Loop over the key blocks and keep only a running max, sum and weighted sum: never compute q K^T "
                 "for all keys at once, not even inside a helper.")
    return reply


# --- online_softmax_attention --------------------------------------------------------------------------------


def probe_online_softmax_attention(student) -> str | None:
    """online_softmax_attention does some work: its result depends on its inputs and is none of them."""
    cases = [(*blockwise_inputs({"Nq": 2, "Nk": 5, "d": 2, "dv": 2, "seed": s}), 2) for s in (1, 2)]
    return degeneracy(student, "online_softmax_attention", cases) or ignored_input(
        student, "online_softmax_attention", cases[0], {0: "q", 1: "K", 2: "V"})


def check_online_softmax_attention_values(student):
    """online_softmax_attention(q, K, V, block_size) equals softmax(q K^T / sqrt(d)) V, for any block size."""

    def prop(dims):
        Q, K, V = blockwise_inputs(dims)
        block = dims["block_k"]
        args = [Q, K, V, block]
        context = Lazy(lambda: f"for {format_call('online_softmax_attention', args)}")
        got = call(student, "online_softmax_attention", *args).value
        exact, _ = _exact(Q, K, V)
        standard = _standard(Q, K, V)[0]
        if Q.ndim == 1:
            exact, standard = exact[0], standard[0]  # (dv,)
        _within_flash_rule("the result", got, exact, [standard], context, _online_mistakes(Q, K, V, block), Q.dtype)

    for_all(blockwise_dims(single_query=True), prop, max_examples=10,
            examples=({"Nq": 0, "Nk": 5, "d": 2, "dv": 2, "block_q": 1, "block_k": 2, "dtype": "float64", "seed": 0},))


def check_online_softmax_attention_large_scores(student):
    """online_softmax_attention stays finite and correct when the scores are around 1e4 (no overflow)."""

    def prop(dims):
        Q, K, V = blockwise_inputs(dims, scale=1e4)
        args = [Q, K, V, dims["block_k"]]
        context = Lazy(lambda: f"for {format_call('online_softmax_attention', args)} (scores around 1e4)")
        got = call(student, "online_softmax_attention", *args).value
        exact, standard = _exact(Q, K, V)[0], _standard(Q, K, V)[0]
        if Q.ndim == 1:
            exact, standard = exact[0], standard[0]
        try:
            _within_flash_rule("the result", got, exact, [standard], context, (), Q.dtype)
        except CheckFailed as exc:
            exc.hint = ("exp(1e4) overflows: keep a running maximum of the scores and exponentiate score - max; "
                        "rescale what you accumulated when the maximum grows.")
            raise

    for_all(blockwise_dims(single_query=True), prop, max_examples=4,
            examples=({"Nq": 0, "Nk": 5, "d": 2, "dv": 2, "block_q": 1, "block_k": 2, "dtype": "float64", "seed": 0},))


ONLINE_MEMORY = {"Nq": 256, "Nk": 32768, "d": 4, "dv": 4, "block": 512}  # full scores: 64 MiB in float64


def check_online_softmax_attention_memory(student):
    """online_softmax_attention never holds the whole (Nq, Nk) score matrix: its peak memory, measured from outside, stays small."""
    n = ONLINE_MEMORY
    Q, K, V = blockwise_inputs({"Nq": n["Nq"], "Nk": n["Nk"], "d": n["d"], "dv": n["dv"], "dtype": "float64", "seed": 5})
    assert_blockwise_memory(student, "online_softmax_attention", [Q, K, V, n["block"]], n["Nq"] * n["Nk"] * 8,
                            f"({n['Nq']}, {n['Nk']})", ref.online_softmax_attention(Q, K, V, 4096))


# --- tiled_attention ------------------------------------------------------------------------------------------


def probe_tiled_attention(student) -> str | None:
    """tiled_attention does some work: its result depends on its inputs and is none of them."""
    cases = [(*blockwise_inputs({"Nq": 3, "Nk": 4, "d": 2, "dv": 2, "seed": s}), 2, 2) for s in (1, 2)]
    return degeneracy(student, "tiled_attention", cases) or ignored_input(
        student, "tiled_attention", cases[0], {0: "Q", 1: "K", 2: "V"}, part=0)


def _tiled_mistakes(Q, K, V, block_k, causal):
    d = Q.shape[-1]
    off = [(lambda: _blocked(Q, K, V, block_k, scale=1 / d, causal=causal), "Scale the scores by 1/sqrt(d), not 1/d."),
           (lambda: _blocked(Q, K, V, block_k, rescale=False, causal=causal), "When the running max grows, rescale the "
            "running sum and the accumulated output by exp(old max - new max)."),
           (lambda: _blocked(Q, K, V, block_k, drop_last=True, causal=causal), "The last key block is shorter when "
            "block_k does not divide Nk: make sure the loop covers it.")]
    if causal:
        off.append((lambda: _exact(Q, K, V)[0], "With causal=True query i may attend only to keys j <= i."))
        off.append((lambda: _exact(Q, K, V, causal=True, diagonal=2)[0], "The causal mask is off by one: key j = i + 1 "
                    "is in the future of query i; mask j > i, not j > i + 1."))
        off.append((lambda: _exact(Q, K, V, causal=True, diagonal=0)[0], "The causal mask is off by one: query i may "
                    "attend to key i itself; mask j > i, not j >= i."))
    return off


def _tiled(student, dims, causal):
    Q, K, V = blockwise_inputs(dims)
    args = [Q, K, V, dims["block_q"], dims["block_k"]]
    context = Lazy(lambda: f"for {format_call('tiled_attention', args)}" + (", causal=True" if causal else ""))
    reply = call(student, "tiled_attention", *args, causal) if causal else call(student, "tiled_attention", *args)
    got = reply.value
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise CheckFailed(f"{context}: should return a pair (O, lse); got {describe(got)}", kind="type")
    return (Q, K, V), got, context


def _check_tiled_values(student, causal):
    def prop(dims):
        (Q, K, V), (O, lse), context = _tiled(student, dims, causal)
        exact_O, exact_lse = _exact(Q, K, V, causal)
        std_O, std_lse = _standard(Q, K, V, causal)
        fused_O, fused_lse = ref.tiled_attention(Q, K, V, dims["block_q"], dims["block_k"], causal)
        _within_flash_rule("O", O, exact_O, [std_O, fused_O], context, _tiled_mistakes(Q, K, V, dims["block_k"], causal),
                           Q.dtype)
        _within_flash_rule("lse", lse, exact_lse, [std_lse, fused_lse], context, (), Q.dtype)

    examples = tuple({"Nq": n, "Nk": n if causal else m, "d": 2, "dv": 2, "block_q": bq, "block_k": bk,
                      "dtype": "float64", "seed": 0} for n, m, bq, bk in ((5, 3, 3, 2), (5, 7, 2, 3), (4, 4, 2, 2)))
    for_all(blockwise_dims(causal=causal), prop, max_examples=8, examples=examples)


def check_tiled_attention_values(student):
    """tiled_attention(Q, K, V, block_q, block_k) returns O = softmax(Q K^T / sqrt(d)) V and its lse, within FlashAttention's error rule."""
    _check_tiled_values(student, causal=False)


def check_tiled_attention_causal_values(student):
    """tiled_attention(..., causal=True) masks keys after each query and stays within FlashAttention's error rule."""
    _check_tiled_values(student, causal=True)


def check_tiled_attention_causality(student):
    """With causal=True, changing key/value j changes no output row i < j."""
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
    """Permuting the queries permutes the rows of O and lse the same way (causal=False)."""

    def prop(dims):
        (O, lse), (O2, lse2), perm, context = _permuted(student, dims, "Nq")
        for name, a, b in (("O", O[perm], O2), ("lse", lse[perm], lse2)):
            if kind_of(b) != "tensor" or b.shape != a.shape or not torch.allclose(b, a, rtol=1e-9, atol=1e-12, equal_nan=True):
                raise CheckFailed(f"{context}: with the queries permuted by {perm.tolist()}, {name} is not the original "
                                  f"{name} permuted the same way", hint="Each query row must be computed from that "
                                  "query alone; do not let the query blocks share state.")

    for_all(blockwise_dims(), prop, max_examples=5,
            examples=({"Nq": 5, "Nk": 4, "d": 2, "dv": 2, "block_q": 2, "block_k": 3, "dtype": "float64", "seed": 0},))


def check_tiled_attention_key_value_permutation_invariance(student):
    """Permuting the keys and values together changes neither O nor lse (causal=False)."""

    def prop(dims):
        (O, lse), (O2, lse2), perm, context = _permuted(student, dims, "Nk")
        for name, a, b in (("O", O, O2), ("lse", lse, lse2)):
            if kind_of(b) != "tensor" or b.shape != a.shape or not torch.allclose(b, a, rtol=1e-9, atol=1e-12, equal_nan=True):
                raise CheckFailed(f"{context}: with the keys and values permuted together by {perm.tolist()}, {name} "
                                  f"changed", hint="Without a mask, attention treats the keys as a set: every key "
                                                   "block must count once, whatever its position.")

    for_all(blockwise_dims(), prop, max_examples=5,
            examples=({"Nq": 3, "Nk": 5, "d": 2, "dv": 2, "block_q": 2, "block_k": 2, "dtype": "float64", "seed": 0},))


TILED_MEMORY = {"N": 2896, "d": 4, "block": 256}  # full scores: 64 MiB in float64


def check_tiled_attention_memory(student):
    """tiled_attention never holds the whole N x N score matrix: its peak memory, measured from outside, stays small."""
    n = TILED_MEMORY
    Q, K, V = blockwise_inputs({"Nq": n["N"], "Nk": n["N"], "d": n["d"], "dv": n["d"], "dtype": "float64", "seed": 6})
    assert_blockwise_memory(student, "tiled_attention", [Q, K, V, n["block"], n["block"]], n["N"] ** 2 * 8,
                            f"({n['N']}, {n['N']})", ref.tiled_attention(Q, K, V, 512, 512)[0], pick=lambda v: v[0])
