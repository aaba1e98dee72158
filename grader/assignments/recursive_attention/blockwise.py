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

from grader.checking.base import CheckFailed, NotJudged, StudentErrorAt, call, diagnose, format_call
from grader.checking.compare import PRECISION, compare_arrays, describe, kind_of
from grader.checking.gate import Probe, moved, same
from grader.checking.positions import Part
from grader.checking.strategies import gaussian, st
from grader.checking.templates import Values, check, values
from reference import recursive as ref

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
    return {
        "Nq": 0 if single_query and draw(st.booleans()) else n_q,
        "Nk": n_q if causal else draw(st.integers(1, 10)),
        "d": draw(st.integers(1, 5)),
        "dv": draw(st.integers(1, 4)),
        "block_q": draw(st.integers(1, 6)),
        "block_k": draw(st.integers(1, 6)),
        "dtype": draw(st.sampled_from(["float32", "float64"])),
        "seed": draw(st.integers(0, 2**16)),
    }


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


def exact_attention(Q, K, V, causal=False, diagonal=1):
    """Attention and its log-sum-exp in float64: the values everything is judged against."""
    return _attention(Q, K, V, causal, diagonal, torch.float64)


def standard_attention(Q, K, V, causal=False):
    """Standard attention in the inputs' own dtype: the error it makes sets the tolerance."""
    return _attention(Q, K, V, causal)


# --- judging values with FlashAttention's rule ------------------------------------------------------------


def within_flash_rule(name: str, got, exact, baselines, context, mistakes, dtype) -> None:
    """``got`` (the input's dtype, the exact value's shape) errs at most twice as much as the worst of
    ``baselines`` (the same quantity computed other ways in the input's dtype), plus a floor."""
    if kind_of(got) != "tensor":
        raise CheckFailed(f"{context}: {name} should be a torch tensor; got {describe(got)}", kind="type")
    if tuple(got.shape) != tuple(exact.shape):
        raise CheckFailed(
            f"{context}: {name} should have shape {tuple(exact.shape)}; got {tuple(got.shape)}", kind="shape"
        )
    if got.dtype != dtype:
        raise CheckFailed(
            f"{context}: {name} has dtype {got.dtype}; expected {dtype} (the dtype of the inputs)", kind="dtype"
        )
    finite = torch.isfinite(exact)
    g = got.detach().double()
    same_inf = (g == exact) | (torch.isnan(g) & torch.isnan(exact))
    err = torch.where(finite, (g - exact).abs(), torch.where(same_inf, 0.0, math.inf))
    err = torch.nan_to_num(err, nan=math.inf)
    worst = max((float(torch.where(finite, (b.double() - exact).abs(), 0.0).max()) for b in baselines), default=0.0)
    coarse = PRECISION.get()  # the answer was computed in a coarser dtype, charged already: judge it at that precision
    eps = (
        8 * torch.finfo(dtype).eps if coarse is None else max(8 * torch.finfo(dtype).eps, 64 * torch.finfo(coarse).eps)
    )
    floor = eps * (1 + float(torch.where(finite, exact.abs(), 0.0).max()))
    allowed = 2 * worst + floor
    if float(err.max()) <= allowed:
        return
    at = np.unravel_index(int(torch.argmax(err)), tuple(err.shape))
    where = f" at index {tuple(int(i) for i in at)}" if at else ""
    raise CheckFailed(
        f"{context}: {name} is off by up to {float(err.max()):.3g}{where} (expected {float(exact[at]):.6g}, got "
        f"{float(g[at]):.6g}); FlashAttention's rule allows {allowed:.3g} here: twice the error of standard "
        f"attention computed in {str(dtype).replace('torch.', '')} ({worst:.3g}) plus a floor of {floor:.3g}",
        hint=diagnose(got, mistakes, rtol=1e-4, atol=1e-6) if mistakes else None,
    )


# --- known mistakes, for hints ----------------------------------------------------------------------------


def blocked_attention(Q, K, V, block_k, *, rescale=True, drop_last=False, scale=None, causal=False):
    """The one-pass algorithm in float64, optionally with a known mistake, for recognising it."""
    Q2, K, V = _rows(Q).double(), K.double(), V.double()
    scale = 1 / math.sqrt(Q2.shape[-1]) if scale is None else scale
    m = torch.full((Q2.shape[0],), -math.inf, dtype=torch.float64)
    total = torch.zeros(Q2.shape[0], dtype=torch.float64)
    acc = torch.zeros(Q2.shape[0], V.shape[-1], dtype=torch.float64)
    stop = (K.shape[0] // block_k) * block_k if drop_last else K.shape[0]
    for k0 in range(0, stop, block_k):
        s = Q2 @ K[k0 : k0 + block_k].T * scale  # (Nq, b)
        if causal:
            s = s.masked_fill(torch.arange(k0, k0 + s.shape[1])[None] > torch.arange(Q2.shape[0])[:, None], -math.inf)
        m_new = torch.maximum(m, s.amax(-1))
        safe = torch.where(torch.isinf(m_new), 0.0, m_new)
        alpha = torch.exp(m - safe) if rescale else torch.ones_like(m)
        p = torch.exp(s - safe[:, None])
        total, acc, m = total * alpha + p.sum(-1), acc * alpha[:, None] + p @ V[k0 : k0 + block_k], m_new
    out = acc / total[:, None]
    return out if Q.ndim == 2 else out[0]


def _online_mistakes(Q, K, V, block):
    d = Q.shape[-1]
    return (
        (lambda: blocked_attention(Q, K, V, block, scale=1 / d), "Scale the scores by 1/sqrt(d), not 1/d."),
        (
            lambda: blocked_attention(Q, K, V, block, rescale=False),
            "When the running max grows, rescale the running sum and "
            "the weighted sum accumulated so far by exp(old max - new max).",
        ),
        (
            lambda: blocked_attention(Q, K, V, block, drop_last=True),
            "The last block is shorter when block_size does not divide "
            "the number of keys: range(0, Nk, block_size) with slices K[start:start + block_size] covers it.",
        ),
    )


# --- memory, measured from outside -------------------------------------------------------------------------


def _ignored_here(student, name: str, args: list, value, inputs: dict) -> str | None:
    """The first of ``inputs`` ({index: name}) whose change leaves the result of ``name`` on ``args``
    (``value``) unchanged, or None when it responds to each. Each call is as large as the measured one, so
    it gets the same CPU budget (Limits.large_call_cpu_s, given to calls whose memory is measured): under
    the ordinary 0.1 s, a blockwise answer that takes 90 ms here ended in or out of time with the machine's state."""
    for salt, (index, label) in enumerate(inputs.items()):
        changed = list(args)
        changed[index] = moved(args[index], salt)
        try:
            if same(call(student, name, *changed, measure_memory=True).value, value):
                return label
        except StudentErrorAt:
            continue
    return None


def _measured_mib(held: int) -> int:
    """A measured peak in MiB to two digits (130 for 130.4 or 131.2): the last MiB varies from run to run with
    when the grader reads the jail's memory, and the verdict depends on it only through a distant threshold."""
    return int(float(f"{held / MiB:.2g}"))


def assert_blockwise_memory(
    student, name: str, args: list, score_bytes: int, what: str, want, pick=lambda v: v, inputs: dict | None = None
) -> None:
    """One call on ``args`` holds at most MEMORY_ALLOWANCE beyond its inputs, where the full score matrix
    takes ``score_bytes``; scores a stand-in computed for the call (attention_partial over many keys) count
    as held by it. A result that is not ``want`` (``pick(value)``, attention) is still judged when the
    function responds to each of its main ``inputs`` ({index: name}) on these arguments: it does the work,
    only with wrong values. A function that answers something cheap for large inputs says nothing about
    how attention uses memory, so it is not judged."""
    reply = call(student, name, *args, measure_memory=True)
    if reply.peak_bytes is None:
        raise RuntimeError("this machine does not let seqgrade measure a call's memory (/proc/PID/clear_refs)")
    try:
        got = pick(reply.value)
    except (TypeError, IndexError, KeyError):
        got = reply.value
    if compare_arrays(got, want, rtol=1e-7, atol=1e-10) is not None:
        ignored = _ignored_here(student, name, args, reply.value, inputs or {0: "q", 1: "K", 2: "V"})
        if ignored is not None:
            raise NotJudged(
                f"the result of {format_call(name, args)} does not change when {ignored} changes: on "
                f"inputs this large your function does not compute attention (see the values checks), "
                f"so its memory use is not judged",
                kind="not_judged",
            )
    served = [
        int(np.prod(s.shapes[0][:-1] or (1,))) * int(s.shapes[1][0]) * 8
        for s in reply.served
        if s.name == "attention_partial" and len(s.shapes) == 3 and s.shapes[1]
    ]
    held = max([reply.peak_bytes, *served])
    if held > MEMORY_ALLOWANCE:
        by = (
            " (counting the scores attention_partial computed for it)"
            if served and max(served) >= reply.peak_bytes
            else ""
        )
        raise CheckFailed(
            f"{format_call(name, args)} held {_measured_mib(held)} MiB at its peak{by}, measured by the grader from "
            f"outside your process; the full {what} score matrix takes {score_bytes / MiB:.0f} MiB, one block of it "
            f"about 1 MiB, and the allowance is {MEMORY_ALLOWANCE / MiB:.0f} MiB. Your function builds the whole score "
            f"matrix (or something as large) at once.",
            kind="values",
            hint="Loop over the key blocks and keep only a running max, sum and weighted sum: never compute q K^T "
            "for all keys at once, not even inside a helper, nor in a buffer made beforehand.",
        )
    return reply


# --- online_softmax_attention --------------------------------------------------------------------------------


PROBE_ONLINE_SOFTMAX_ATTENTION = Probe(
    "online_softmax_attention",
    blockwise_dims(single_query=True),
    lambda dims: [*blockwise_inputs(dims), dims["block_k"]],
    ref.online_softmax_attention,
    {0: "q", 1: "K", 2: "V"},
)


def _online_inputs(scale: float = 1.0):
    def inputs(dims):
        return [*blockwise_inputs(dims, scale=scale), dims["block_k"]]

    return inputs


def _online_exact(Q, K, V, block):
    """The float64 result and standard attention in the inputs' dtype, (dv,) for a single query."""
    exact, standard = exact_attention(Q, K, V)[0], standard_attention(Q, K, V)[0]
    return (exact[0], [standard[0]]) if Q.ndim == 1 else (exact, [standard])


OVERFLOW_HINT = (
    "exp(1e4) overflows: keep a running maximum of the scores and exponentiate score - max; rescale what "
    "you accumulated when the maximum grows."
)


def _online_rule(mistakes: bool, hint: str | None = None):
    def compare(got, want, args, context, name):
        Q, K, V, block = args
        try:
            within_flash_rule(name, got, *want, context, _online_mistakes(Q, K, V, block) if mistakes else (), Q.dtype)
        except CheckFailed as exc:
            exc.hint = hint or exc.hint
            raise

    return compare


ONLINE_SMALL = {"Nq": 0, "Nk": 5, "d": 2, "dv": 2, "block_q": 1, "block_k": 2, "dtype": "float64", "seed": 0}

check_online_softmax_attention_values = check(
    values,
    "check_online_softmax_attention_values",
    """online_softmax_attention(q, K, V, block_size) equals softmax(q K^T / sqrt(d)) V, for any block size.

    Always judged.""",
    spec=Values(
        "online_softmax_attention",
        lambda: blockwise_dims(single_query=True),
        _online_inputs(),
        _online_exact,
        max_examples=10,
        examples=(ONLINE_SMALL,),
        compare=_online_rule(True),
    ),
)

check_online_softmax_attention_large_scores = check(
    values,
    "check_online_softmax_attention_large_scores",
    """online_softmax_attention stays finite and correct when the scores are around 1e4 (no overflow).

    Always judged.""",
    spec=Values(
        "online_softmax_attention",
        lambda: blockwise_dims(single_query=True),
        _online_inputs(scale=1e4),
        _online_exact,
        max_examples=4,
        examples=(ONLINE_SMALL,),
        compare=_online_rule(False, OVERFLOW_HINT),
        show=lambda args: format_call("online_softmax_attention", args) + " (scores around 1e4)",
    ),
)


ONLINE_MEMORY = {"Nq": 256, "Nk": 32768, "d": 4, "dv": 4, "block": 512}  # full scores: 64 MiB in float64


def check_online_softmax_attention_memory(student):
    """online_softmax_attention never holds the whole (Nq, Nk) score matrix: its peak memory, measured from outside,
    stays small.

    Not judged when, on the large input, the result is not attention and does not change when q, K or V
    changes (an answer computed without the keys says nothing about memory)."""
    n = ONLINE_MEMORY
    Q, K, V = blockwise_inputs(
        {"Nq": n["Nq"], "Nk": n["Nk"], "d": n["d"], "dv": n["dv"], "dtype": "float64", "seed": 5}
    )
    assert_blockwise_memory(
        student,
        "online_softmax_attention",
        [Q, K, V, n["block"]],
        n["Nq"] * n["Nk"] * 8,
        f"({n['Nq']}, {n['Nk']})",
        ref.online_softmax_attention(Q, K, V, 4096),
    )


# --- the order properties tiled_attention and flash_forward share (grader.checking.positions.Permutation) --------

QUERY_ORDER = {
    "parts": (Part("O", 0, 0), Part("lse", 1, 0)),
    "failure": "with the queries permuted by {perm}, {part} is not the original {part} permuted the same way",
}
KEY_ORDER = {
    "arguments": (1, 2),
    "parts": (Part("O", 0, None), Part("lse", 1, None)),
    "failure": "with the keys and values permuted together by {perm}, {part} changed",
}
