"""The forward kernel of the fused attention (:mod:`.triton_kernels` launches it): a program owns BLOCK_M
queries and streams key/value blocks past them with an online softmax in base 2."""

from __future__ import annotations

import triton
import triton.language as tl

from .triton_tiles import _put, _tile


@triton.jit
def _fwd_keys(
    acc,
    l_i,
    m_i,
    q,
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
    # Fold key blocks [lo, hi) into the running (acc, l_i, m_i). MASK: 0 every key visible (no mask at all),
    # 1 causal (blocks the diagonal crosses), 2 keys at or past N_K hidden (the ragged last block).
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + tl.arange(0, BLOCK_N)
        k = _tile(k_base, cols, N_K, skn, skd, offs_d, HEAD_DIM, BLOCK_D, MASK != 0)  # (BLOCK_N, BLOCK_D)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION)  # (BLOCK_M, BLOCK_N), not yet scaled
        if MASK == 1:
            s = tl.where(cols[None, :] <= rows[:, None], s, float("-inf"))
        if MASK == 2:
            s = tl.where(cols[None, :] < N_K, s, float("-inf"))
        # Every row sees a key in the first block it visits, so m_new is finite from then on.
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)  # running max, base-2 units
        p = tl.exp2(s * qk_scale - m_new[:, None])  # one FMA and one exp2 per score
        alpha = tl.exp2(m_i - m_new)  # rescales what was accumulated under the old max (0 at the start)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = _tile(v_base, cols, N_K, svn, svd, offs_d, HEAD_DIM, BLOCK_D, MASK != 0)  # (BLOCK_N, BLOCK_D)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=PRECISION)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _fwd_kernel(
    Q,
    K,
    V,
    O,
    LSE,
    qk_scale,
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
    sob,
    soh,
    son,
    sod,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    CAUSAL: tl.constexpr,
    PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    tl.static_assert(BLOCK_M % BLOCK_N == 0)  # the diagonal is made of whole key blocks
    start_m = tl.program_id(0)
    if CAUSAL:  # longest rows first
        start_m = tl.num_programs(0) - 1 - start_m
    bh = tl.program_id(1)
    b, h = (bh // HEADS).to(tl.int64), (bh % HEADS).to(tl.int64)
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    q = _tile(Q + b * sqb + h * sqh, rows, N_Q, sqn, sqd, offs_d, HEAD_DIM, BLOCK_D, True)  # (BLOCK_M, BLOCK_D)
    k_base, v_base = K + b * skb + h * skh, V + b * svb + h * svh
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)  # running row max of the scaled scores, base 2
    l_i = tl.zeros([BLOCK_M], tl.float32)  # running sum of exp2(score - m_i)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)  # running sum of exp2(score - m_i) v
    if CAUSAL:  # N_Q == N_K: keys left of the diagonal block are visible to every row, later ones to none
        diag = start_m * BLOCK_M
        acc, l_i, m_i = _fwd_keys(
            acc,
            l_i,
            m_i,
            q,
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
        acc, l_i, m_i = _fwd_keys(
            acc,
            l_i,
            m_i,
            q,
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
        acc, l_i, m_i = _fwd_keys(
            acc,
            l_i,
            m_i,
            q,
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
        acc, l_i, m_i = _fwd_keys(
            acc,
            l_i,
            m_i,
            q,
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
    out = acc / l_i[:, None]
    lse = (m_i + tl.log2(l_i)) * 0.6931471805599453  # ln 2: back to the natural log
    _put(O + b * sob + h * soh, rows, N_Q, son, sod, offs_d, out.to(O.dtype.element_ty), HEAD_DIM)
    tl.store(LSE + bh.to(tl.int64) * N_Q + rows, lse, mask=rows < N_Q)
