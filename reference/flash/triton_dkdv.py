"""The dK/dV kernel of the fused attention's backward pass: a program owns BLOCK_N keys and accumulates their
dK and dV over the query blocks that see them, computed transposed."""

from __future__ import annotations

import triton
import triton.language as tl

from .triton_tiles import _put, _tile


@triton.jit
def _dkdv_queries(
    dk,
    dv,
    k,
    v,
    q_base,
    do_base,
    lse_base,
    delta_base,
    sqn,
    sqd,
    sdon,
    sdod,
    cols,
    lo,
    hi,
    N_Q,
    qk_scale,
    offs_d,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_M: tl.constexpr,
    CAUSAL_MASK: tl.constexpr,
    PRECISION: tl.constexpr,
):
    # Accumulate this key block's dK (without the scale) and dV over query blocks [lo, hi), transposed.
    # Query rows past N_Q read q = dO = lse = delta = 0 and so add exactly 0; key columns past N_K only touch
    # rows of dK and dV that are never stored.
    for start_m in range(lo, hi, BLOCK_M):
        start_m = tl.multiple_of(start_m, BLOCK_M)
        rows = start_m + tl.arange(0, BLOCK_M)
        q = _tile(q_base, rows, N_Q, sqn, sqd, offs_d, HEAD_DIM, BLOCK_D, True)  # (BLOCK_M, BLOCK_D)
        do = _tile(do_base, rows, N_Q, sdon, sdod, offs_d, HEAD_DIM, BLOCK_D, True)
        lse2 = tl.load(lse_base + rows, mask=rows < N_Q, other=0.0) * 1.44269504  # 1/ln 2: LSE in base 2
        delta = tl.load(delta_base + rows, mask=rows < N_Q, other=0.0)
        s_t = tl.dot(k, tl.trans(q), input_precision=PRECISION)  # (BLOCK_N, BLOCK_M)
        p_t = tl.exp2(s_t * qk_scale - lse2[None, :])  # probabilities, recomputed
        if CAUSAL_MASK:
            p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)
        dv = tl.dot(p_t.to(do.dtype), do, dv, input_precision=PRECISION)  # (BLOCK_N, BLOCK_D)
        dp_t = tl.dot(v, tl.trans(do), input_precision=PRECISION)  # (BLOCK_N, BLOCK_M)
        ds_t = p_t * (dp_t - delta[None, :])
        dk = tl.dot(ds_t.to(q.dtype), q, dk, input_precision=PRECISION)
    return dk, dv


@triton.jit
def _dkdv_kernel(
    Q,
    K,
    V,
    DO,
    LSE,
    DELTA,
    DK,
    DV,
    qk_scale,
    sm_scale,
    N_Q,
    N_K,
    HEADS,
    TUNE_N,
    sqb,
    sqh,
    sqn,
    sqd,
    skb,
    skh,
    skn,
    skd,
    svb,
    svh,
    svn,
    svd,
    sdob,
    sdoh,
    sdon,
    sdod,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    CAUSAL: tl.constexpr,
    PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    tl.static_assert(BLOCK_N % BLOCK_M == 0)  # the diagonal is made of whole query blocks
    bh = tl.program_id(1)
    b, h = (bh // HEADS).to(tl.int64), (bh % HEADS).to(tl.int64)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    k = _tile(K + b * skb + h * skh, cols, N_K, skn, skd, offs_d, HEAD_DIM, BLOCK_D, True)  # (BLOCK_N, BLOCK_D)
    v = _tile(V + b * svb + h * svh, cols, N_K, svn, svd, offs_d, HEAD_DIM, BLOCK_D, True)
    dk = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)
    dv = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)
    q_base, do_base = Q + b * sqb + h * sqh, DO + b * sdob + h * sdoh
    lse_base, delta_base = LSE + bh.to(tl.int64) * N_Q, DELTA + bh.to(tl.int64) * N_Q
    if CAUSAL:  # earlier queries see none of these keys; the BLOCK_N queries on the diagonal see some
        diag = tl.program_id(0) * BLOCK_N
        dk, dv = _dkdv_queries(
            dk,
            dv,
            k,
            v,
            q_base,
            do_base,
            lse_base,
            delta_base,
            sqn,
            sqd,
            sdon,
            sdod,
            cols,
            diag,
            tl.minimum(diag + BLOCK_N, N_Q),
            N_Q,
            qk_scale,
            offs_d,
            HEAD_DIM,
            BLOCK_D,
            BLOCK_M,
            True,
            PRECISION,
        )
        dk, dv = _dkdv_queries(
            dk,
            dv,
            k,
            v,
            q_base,
            do_base,
            lse_base,
            delta_base,
            sqn,
            sqd,
            sdon,
            sdod,
            cols,
            diag + BLOCK_N,
            N_Q,
            N_Q,
            qk_scale,
            offs_d,
            HEAD_DIM,
            BLOCK_D,
            BLOCK_M,
            False,
            PRECISION,
        )
    else:
        dk, dv = _dkdv_queries(
            dk,
            dv,
            k,
            v,
            q_base,
            do_base,
            lse_base,
            delta_base,
            sqn,
            sqd,
            sdon,
            sdod,
            cols,
            0,
            N_Q,
            N_Q,
            qk_scale,
            offs_d,
            HEAD_DIM,
            BLOCK_D,
            BLOCK_M,
            False,
            PRECISION,
        )
    at = bh.to(tl.int64) * N_K * HEAD_DIM  # DK and DV are contiguous (B, H, N_K, HEAD_DIM)
    _put(DK + at, cols, N_K, HEAD_DIM, 1, offs_d, (dk * sm_scale).to(DK.dtype.element_ty), HEAD_DIM)
    _put(DV + at, cols, N_K, HEAD_DIM, 1, offs_d, dv.to(DV.dtype.element_ty), HEAD_DIM)
