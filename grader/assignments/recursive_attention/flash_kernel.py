"""Checks for flash_forward, the bonus exercise: FlashAttention's forward pass written as a Triton kernel.

The notebook gives the launch code (``flash_forward`` pads the head dimension to a power of two of at least
16 and starts one program per block of queries); the student writes the kernel's body. The grader calls
``flash_forward`` like any other student function, inside the jail, where every kernel runs in Triton's
interpreter on the CPU tensors the grader sends (``grader.jail.zygote`` sets ``TRITON_INTERPRET``), so a
verdict never depends on the grading machine's GPU. The interpreter runs one program after another in numpy
(a 16 x 16 block pair costs about 4 ms there), so the inputs stay small: at most 24 queries and keys, a head
dimension of at most 32, blocks of 16 or 32, float32 throughout.

The kernel is judged by the properties the reference's kernels are tested for: its output and its
log-sum-exp within FlashAttention's error rule against float64 (the error at most twice that of standard
attention computed in float32, or of the fused reference, plus a floor), without and with the causal mask;
causality; equivariance under a permutation of the queries and invariance under one of the keys. triton is
optional: where the grading machine lacks it, no check is judged (``triton_missing``).
"""

from __future__ import annotations

import importlib.util
import math

import torch

from grader.checking.base import CheckFailed, Lazy, NotJudged, Passed, call, for_all, format_call
from grader.checking.compare import describe, kind_of
from grader.checking.gate import Probe
from grader.checking.positions import Permutation, changed_positions, permutation_equivariance, torch_permutation
from grader.checking.strategies import gaussian, st
from grader.checking.templates import check
from reference import recursive as ref

from .blockwise import (
    KEY_ORDER,
    QUERY_ORDER,
    blocked_attention,
    blockwise_inputs,
    exact_attention,
    standard_attention,
    within_flash_rule,
)

NAME = "flash_forward"
BLOCKS = (16, 32)  # tl.dot needs blocks of at least 16 on a GPU; the launch code takes these two
MAX_N, MAX_D = 24, 32  # at most (24 / 16)^2 = 4 block pairs a call: about 20 ms in the interpreter


def triton_missing() -> str | None:
    """Why no kernel can run on this machine (triton is not installed), or None when it can. Cheap: triton is
    looked up, never imported, by the grader."""
    if importlib.util.find_spec("triton") is None:
        return "triton is not installed on the grading machine, so Triton kernels cannot run here"
    return None


# --- the inputs ------------------------------------------------------------------------------------------


@st.composite
def kernel_dims(draw, *, causal: bool | None = False):
    """Queries, keys (equal when causal), the head dimension, the two block sizes and a seed; ``causal=None``
    draws the mask too."""
    masked = draw(st.booleans()) if causal is None else causal
    n_q = draw(st.integers(1, MAX_N))
    return {
        "Nq": n_q,
        "Nk": n_q if masked else draw(st.integers(1, MAX_N)),
        "d": draw(st.integers(1, MAX_D)),
        "block_m": draw(st.sampled_from(BLOCKS)),
        "block_n": draw(st.sampled_from(BLOCKS)),
        "causal": masked,
        "seed": draw(st.integers(0, 2**16)),
    }


def kernel_inputs(dims: dict) -> list[torch.Tensor]:
    """``[Q (Nq, d), K (Nk, d), V (Nk, d)]`` in float32."""
    return blockwise_inputs({**dims, "dv": dims["d"], "dtype": "float32"})


def kernel_args(dims: dict) -> list:
    """The arguments of one call: ``[Q, K, V, causal, block_m, block_n]``."""
    return [*kernel_inputs(dims), bool(dims["causal"]), dims["block_m"], dims["block_n"]]


PROBE_FLASH_FORWARD = Probe(
    NAME, kernel_dims(), kernel_args, ref.flash_forward, {0: "Q", 1: "K", 2: "V"}, count=3, per_output=True
)


def _launched(got, context):
    """``got`` if it is the pair (O, lse) the launch code returns, else CheckFailed."""
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise CheckFailed(
            f"{context}: should return the pair (O, lse) the launch code returns; got {describe(got)}",
            kind="type",
            hint="Keep the launch code as given: it returns (O, lse).",
        )
    return got


def _forward(student, args: list):
    """The student's ``(O, lse)`` for ``args``, and the context that names the call."""
    context = Lazy(lambda: f"for {format_call(NAME, args)}")
    return _launched(call(student, NAME, *args).value, context), context


def _rows(value, n: int, name: str, context) -> torch.Tensor:
    """``value`` as a tensor with ``n`` rows, or NotJudged (the values checks charge anything else)."""
    if kind_of(value) != "tensor" or value.ndim < 1 or value.shape[0] != n:
        raise NotJudged(
            f"{context}: {name} is {describe(value)}, not a tensor with one row per query (see the values checks)",
            kind="not_judged",
        )
    return value.detach().double()


# --- values and log-sum-exp, with FlashAttention's rule ------------------------------------------------------


def _output_mistakes(Q, K, V, dims):
    causal, block = dims["causal"], dims["block_n"]
    found = [
        (
            lambda: blocked_attention(Q, K, V, block, scale=1 / Q.shape[-1], causal=causal),
            "Multiply the scores by scale = 1/sqrt(d) once, as the launch code passes it; not by scale twice.",
        ),
        (
            lambda: blocked_attention(Q, K, V, block, rescale=False, causal=causal),
            "When the running max m grows, rescale l and acc by alpha = exp(m_old - m_new) before adding the new "
            "block.",
        ),
        (
            lambda: blocked_attention(Q, K, V, block, drop_last=True, causal=causal),
            "The last key block is partial when BLOCK_N does not divide N_K: loop over range(0, N_K, BLOCK_N) and "
            "mask the keys >= N_K with -inf.",
        ),
    ]
    if causal:
        hint = (
            "With CAUSAL, set the scores of keys j > i to -inf (tl.where comparing the keys' indices with the "
            "rows'), in every block that crosses the diagonal."
        )
        found.append((lambda: exact_attention(Q, K, V)[0], hint))
        found.append((lambda: _unmasked_diagonal(Q, K, V, dims["block_m"]), hint))
    return found


def _unmasked_diagonal(Q, K, V, block_m):
    """Causal attention whose mask was forgotten inside the diagonal blocks: row i sees every key of its own
    block of queries."""
    n = Q.shape[0]
    rows = torch.arange(n)[:, None]
    future = torch.arange(K.shape[0])[None, :] >= torch.clamp((rows // block_m + 1) * block_m, max=K.shape[0])
    scores = (Q.double() @ K.double().T / math.sqrt(Q.shape[-1])).masked_fill(future, -math.inf)
    return torch.softmax(scores, -1) @ V.double()


def _check_output(student, causal: bool) -> None:
    def prop(dims):
        dims = dict(dims, causal=causal)
        args = kernel_args(dims)
        Q, K, V = args[:3]
        (O, _), context = _forward(student, args)
        fused = ref.flash_forward(*args)[0]
        within_flash_rule(
            "O",
            O,
            exact_attention(Q, K, V, causal)[0],
            [standard_attention(Q, K, V, causal)[0], fused],
            context,
            _output_mistakes(Q, K, V, dims),
            Q.dtype,
        )

    examples = (
        {"Nq": 24, "Nk": 24 if causal else 17, "d": 5, "block_m": 16, "block_n": 16, "seed": 0},
        {"Nq": 20, "Nk": 20 if causal else 7, "d": 16, "block_m": 32, "block_n": 16, "seed": 1},
    )
    for_all(
        kernel_dims(causal=causal),
        prop,
        max_examples=2,
        examples=tuple(dict(e, causal=causal) for e in examples),
        key=f"causal={causal}",
    )


def check_flash_forward_values(student):
    """flash_forward(Q, K, V) returns O = softmax(Q K^T / sqrt(d)) V within FlashAttention's error rule against float64.

    Always judged."""
    _check_output(student, causal=False)


def check_flash_forward_causal_values(student):
    """flash_forward(Q, K, V, causal=True) masks keys after each query and stays within FlashAttention's error rule.

    Always judged."""
    _check_output(student, causal=True)


def _lse_mistakes(Q, K, V, causal):
    scores = (Q.double() @ K.double().T) / math.sqrt(Q.shape[-1])  # (Nq, Nk)
    if causal:
        scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), -math.inf)
    m = scores.amax(-1)
    log_l = torch.logsumexp(scores - m[:, None], -1)  # log of the running sum at the end
    return (
        (lambda: m, "Store the log-sum-exp m + log(l), not the running max m alone."),
        (lambda: m + log_l / math.log(2), "lse is a natural logarithm: m + log(l) (tl.log), not m + log2(l)."),
        (lambda: log_l, "Add the running max back: lse = m + log(l)."),
        (lambda: m + torch.exp(log_l), "Take the log of the running sum: lse = m + log(l), not m + l."),
    )


def check_flash_forward_lse(student):
    """flash_forward's lse is log sum_j exp(q_i . k_j / sqrt(d)) over the keys each query sees, within FlashAttention's
    error rule.

    Always judged."""

    def prop(dims):
        args = kernel_args(dims)
        Q, K, V = args[:3]
        (_, lse), context = _forward(student, args)
        causal = dims["causal"]
        fused = ref.flash_forward(*args)[1]
        within_flash_rule(
            "lse",
            lse,
            exact_attention(Q, K, V, causal)[1],
            [standard_attention(Q, K, V, causal)[1], fused],
            context,
            _lse_mistakes(Q, K, V, causal),
            Q.dtype,
        )

    for_all(
        kernel_dims(causal=None),
        prop,
        max_examples=2,
        examples=(
            {"Nq": 17, "Nk": 23, "d": 5, "block_m": 16, "block_n": 16, "causal": False, "seed": 2},
            {"Nq": 20, "Nk": 20, "d": 8, "block_m": 16, "block_n": 32, "causal": True, "seed": 3},
        ),
    )


# --- properties of the student's own kernel ---------------------------------------------------------------------


def _moved_rows(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Which rows of ``b`` differ from those of ``a`` by more than float32 rounding (NaN appearing counts)."""
    return changed_positions(b, a, axis=0, nan_moves=True, floor=64 * torch.finfo(torch.float32).eps)


def _cuts(n: int, dims: dict) -> list[int]:
    """Where the changed suffix of keys starts: after the first key (inside the first block of queries: a mask
    left out of the diagonal blocks, or off by one, leaks there), in the middle, and just after the first edge
    between blocks of queries (a mask kept to the first block leaks there)."""
    near = {1, n // 2, dims["block_m"] + 1}
    return sorted(c for c in near if 1 <= c < n)


# by hand: key suffixes changed at a few cuts, not an influence matrix (a call costs ~20 ms in the interpreter).
def check_flash_forward_causality(student):
    """With causal=True, changing the keys and values from position c on changes no output row before c.

    Not judged when O is not a tensor with one row per query, or no output row ever depends on an earlier key
    (attention that mixes no positions is trivially causal)."""
    mixes: list[bool] = []

    def prop(dims):
        dims = dict(dims, causal=True)
        args = kernel_args(dims)
        (O, _), context = _forward(student, args)
        n, d, seed = dims["Nq"], dims["d"], dims["seed"]
        O = _rows(O, n, "O", context)

        def after(K2, V2):
            return _rows(call(student, NAME, args[0], K2, V2, *args[3:]).value[0], n, "O", context)

        for c in _cuts(n, dims):
            K2, V2 = args[1].clone(), args[2].clone()
            K2[c:] += gaussian(seed + 50 + c, n - c, d).float()
            V2[c:] += gaussian(seed + 90 + c, n - c, d).float()
            leaked = _moved_rows(O, after(K2, V2))[:c].nonzero().flatten().tolist()
            if leaked:
                raise CheckFailed(
                    f"{context}: changing keys and values {c} to {n - 1} changed output row {leaked[-1]}, "
                    f"which may only see keys 0 to {leaked[-1]}; {len(leaked)} earlier rows moved",
                    hint="Mask every key j > i with -inf in the blocks that cross the diagonal, comparing "
                    "the key's index with the query's (offsets included), and visit no key block "
                    "wholly in the future.",
                )
        if n > 1:
            K2, V2 = args[1].clone(), args[2].clone()
            K2[0] += gaussian(seed + 130, d).float()
            V2[0] += gaussian(seed + 131, d).float()
            mixes.append(bool(_moved_rows(O, after(K2, V2))[1:].any()))

    for_all(
        kernel_dims(causal=True),
        prop,
        max_examples=1,
        examples=(
            {"Nq": 20, "Nk": 20, "d": 3, "block_m": 16, "block_n": 16, "causal": True, "seed": 4},
            {"Nq": 24, "Nk": 24, "d": 6, "block_m": 32, "block_n": 16, "causal": True, "seed": 5},
        ),
    )
    if not any(mixes):
        raise NotJudged(
            "no output row ever changed when an earlier key or value changed, so the kernel does not "
            "attend to the past; causality pays only for attention that mixes positions"
        )
    return Passed()


def _judged_rows(value, args, context) -> tuple:
    """(O, lse) (see _launched), each as a float64 tensor with one row per query (else not judged)."""
    O, lse = _launched(value, context)
    return _rows(O, args[0].shape[0], "O", context), _rows(lse, args[0].shape[0], "lse", context)


def _reordered_rows(value, args, context) -> tuple:
    O, lse = (_rows(v, args[0].shape[0], name, context) for v, name in zip(value, ("O", "lse")))
    return O, lse


def _permuted(**spec) -> Permutation:
    """flash_forward (causal=False) with the queries, or the keys and values, reordered; O and lse must agree
    within float32 rounding of the other order of summation."""
    return Permutation(
        NAME,
        kernel_dims,
        lambda dims: kernel_args(dict(dims, causal=False)),
        lambda dims: dims["seed"],
        max_examples=1,
        axis=0,
        permutation=torch_permutation,
        form=_judged_rows,
        moved_form=_reordered_rows,
        rtol=1e-5,
        atol=1e-5,
        check_dtype=False,
        **spec,
    )


check_flash_forward_query_permutation_equivariance = check(
    permutation_equivariance,
    "check_flash_forward_query_permutation_equivariance",
    """Permuting the queries permutes the rows of O and lse the same way (causal=False).

    Not judged when O or lse is not a tensor with one row per query.""",
    spec=_permuted(
        examples=({"Nq": 21, "Nk": 9, "d": 4, "block_m": 16, "block_n": 16, "causal": False, "seed": 6},),
        **QUERY_ORDER,
        hint="Each output row depends on its own query only: keep the running max, sum and output per row "
        "(reductions over axis 1), never over the rows of the block.",
    ),
)

check_flash_forward_key_permutation_invariance = check(
    permutation_equivariance,
    "check_flash_forward_key_permutation_invariance",
    """Permuting the keys and values together changes neither O nor lse (causal=False).

    Not judged when O or lse is not a tensor with one row per query.""",
    spec=_permuted(
        examples=({"Nq": 5, "Nk": 21, "d": 4, "block_m": 16, "block_n": 16, "causal": False, "seed": 7},),
        **KEY_ORDER,
        hint="Without a mask, attention treats the keys as a set: every key block must count once, the "
        "partial last one too, and what was accumulated under an old maximum must be rescaled.",
    ),
)
