"""The dQ kernel of the fused attention's backward pass: a program owns BLOCK_M queries and accumulates their
dQ over the key blocks they see."""

from __future__ import annotations

import triton
import triton.language as tl

from .triton_tiles import _put, _tile


@triton.jit
def _dq_keys(
    dq,
    q,
    do,
    lse2,
    delta,
    k_base,
    v_base,
    skn,
    skd,
    svn,
    svd,
    rows,
    lo,
    hi,
    N_K,
    qk_scale,
    offs_d,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_N: tl.constexpr,
    MASK: tl.constexpr,
    PRECISION: tl.constexpr,
):
    # Accumulate this query block's dQ (without the scale) over key blocks [lo, hi); MASK as in triton_fwd._fwd_keys.
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + tl.arange(0, BLOCK_N)
        k = _tile(k_base, cols, N_K, skn, skd, offs_d, HEAD_DIM, BLOCK_D, MASK != 0)  # (BLOCK_N, BLOCK_D)
        v = _tile(v_base, cols, N_K, svn, svd, offs_d, HEAD_DIM, BLOCK_D, MASK != 0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION)  # (BLOCK_M, BLOCK_N)
        p = tl.exp2(s * qk_scale - lse2[:, None])
        if MASK == 1:
            p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)
        if MASK == 2:  # a key past N_K reads as 0 and would get probability exp(-lse), possibly inf
            p = tl.where(cols[None, :] < N_K, p, 0.0)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)  # (BLOCK_M, BLOCK_N)
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq, input_precision=PRECISION)
    return dq


@triton.jit
def _dq_kernel(
    Q,
    K,
    V,
    DO,
    LSE,
    DELTA,
    DQ,
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
    tl.static_assert(BLOCK_M % BLOCK_N == 0)
    start_m = tl.program_id(0)
    if CAUSAL:  # longest rows first
        start_m = tl.num_programs(0) - 1 - start_m
    bh = tl.program_id(1)
    b, h = (bh // HEADS).to(tl.int64), (bh % HEADS).to(tl.int64)
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    q = _tile(Q + b * sqb + h * sqh, rows, N_Q, sqn, sqd, offs_d, HEAD_DIM, BLOCK_D, True)  # (BLOCK_M, BLOCK_D)
    do = _tile(DO + b * sdob + h * sdoh, rows, N_Q, sdon, sdod, offs_d, HEAD_DIM, BLOCK_D, True)
    at = bh.to(tl.int64) * N_Q + rows
    lse2 = tl.load(LSE + at, mask=rows < N_Q, other=0.0) * 1.44269504  # 1/ln 2: LSE in base 2
    delta = tl.load(DELTA + at, mask=rows < N_Q, other=0.0)
    k_base, v_base = K + b * skb + h * skh, V + b * svb + h * svh
    dq = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    if CAUSAL:
        diag = start_m * BLOCK_M
        dq = _dq_keys(
            dq,
            q,
            do,
            lse2,
            delta,
            k_base,
            v_base,
            skn,
            skd,
            svn,
            svd,
            rows,
            0,
            diag,
            N_K,
            qk_scale,
            offs_d,
            HEAD_DIM,
            BLOCK_D,
            BLOCK_N,
            0,
            PRECISION,
        )
        dq = _dq_keys(
            dq,
            q,
            do,
            lse2,
            delta,
            k_base,
            v_base,
            skn,
            skd,
            svn,
            svd,
            rows,
            diag,
            tl.minimum(diag + BLOCK_M, N_K),
            N_K,
            qk_scale,
            offs_d,
            HEAD_DIM,
            BLOCK_D,
            BLOCK_N,
            1,
            PRECISION,
        )
    else:
        full = (N_K // BLOCK_N) * BLOCK_N
        dq = _dq_keys(
            dq,
            q,
            do,
            lse2,
            delta,
            k_base,
            v_base,
            skn,
            skd,
            svn,
            svd,
            rows,
            0,
            full,
            N_K,
            qk_scale,
            offs_d,
            HEAD_DIM,
            BLOCK_D,
            BLOCK_N,
            0,
            PRECISION,
        )
        dq = _dq_keys(
            dq,
            q,
            do,
            lse2,
            delta,
            k_base,
            v_base,
            skn,
            skd,
            svn,
            svd,
            rows,
            full,
            N_K,
            N_K,
            qk_scale,
            offs_d,
            HEAD_DIM,
            BLOCK_D,
            BLOCK_N,
            2,
            PRECISION,
        )
    _put(
        DQ + bh.to(tl.int64) * N_Q * HEAD_DIM,
        rows,
        N_Q,
        HEAD_DIM,
        1,
        offs_d,
        (dq * sm_scale).to(DQ.dtype.element_ty),
        HEAD_DIM,
    )
