"""Fused attention kernels in Triton (FlashAttention-2's schedule), forward and backward.

References: Dao et al., "FlashAttention" (2022) and "FlashAttention-2" (2023), whose section 3.1 splits the
causal loop; Triton's fused-attention tutorial. Tensors are (B, H, N, d) with any strides.

* Forward: a program owns BLOCK_M queries (kept in registers) and streams key/value blocks past them with an
  online softmax in base 2 (``exp2``, with 1/ln 2 folded into the scale). Key blocks wholly visible to every
  query of the block run without a mask; only the ragged last block (non-causal) or the blocks the diagonal
  crosses (causal) are masked, and key blocks wholly in the future are never read. Causal programs take the
  longest query blocks first so that the short ones fill the tail of the launch.
* Backward: ``delta = rowsum(dO * O) - dLSE`` in one small kernel, then one kernel per key block accumulating
  dK and dV over the query blocks that see it, computed transposed (``S^T = K Q^T``, so ``P^T`` feeds
  ``dV = P^T dO`` with no transpose in registers), and one kernel per query block accumulating dQ. Both
  recompute P from the saved LSE and split their loops the same way. The softmax scale multiplies dK and dQ
  once at the end instead of every score.

Block sizes, warps and stages are autotuned per GPU architecture (:mod:`.triton_tuning`); the interpreter runs
one config. fp32 dots are IEEE (``input_precision="ieee"``), never TF32. Importing this module touches no GPU
driver; kernels compile on first call (or run in Triton's interpreter when TRITON_INTERPRET=1 was set before
triton was imported).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .triton_tuning import launcher, tune_n


@triton.jit
def _tile(base, rows, n_rows, s_row, s_d, offs_d, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
          CHECK_ROWS: tl.constexpr):
    # A (rows, BLOCK_D) tile; rows at or past n_rows (when CHECK_ROWS) and columns past HEAD_DIM read as 0.
    ptrs = base + rows[:, None] * s_row + offs_d[None, :] * s_d
    if CHECK_ROWS:
        if BLOCK_D == HEAD_DIM:
            t = tl.load(ptrs, mask=rows[:, None] < n_rows, other=0.0)
        else:
            t = tl.load(ptrs, mask=(rows[:, None] < n_rows) & (offs_d[None, :] < HEAD_DIM), other=0.0)
    else:
        if BLOCK_D == HEAD_DIM:
            t = tl.load(ptrs)
        else:
            t = tl.load(ptrs, mask=offs_d[None, :] < HEAD_DIM, other=0.0)
    return t


@triton.jit
def _put(base, rows, n_rows, s_row, s_d, offs_d, value, HEAD_DIM: tl.constexpr):
    tl.store(base + rows[:, None] * s_row + offs_d[None, :] * s_d, value,
             mask=(rows[:, None] < n_rows) & (offs_d[None, :] < HEAD_DIM))


@triton.jit
def _fwd_keys(acc, l_i, m_i, q, k_base, v_base, skn, skd, svn, svd, rows, lo, hi, N_K, qk_scale, offs_d,
              HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr,
              PRECISION: tl.constexpr):
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
def _fwd_kernel(Q, K, V, O, LSE, qk_scale, N_Q, N_K, HEADS, TUNE_N,
                sqb, sqh, sqn, sqd, skb, skh, skn, skd, svb, svh, svn, svd, sob, soh, son, sod,
                HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
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
        acc, l_i, m_i = _fwd_keys(acc, l_i, m_i, q, k_base, v_base, skn, skd, svn, svd, rows, 0, diag, N_K,
                                  qk_scale, offs_d, HEAD_DIM, BLOCK_D, BLOCK_N, 0, PRECISION)
        acc, l_i, m_i = _fwd_keys(acc, l_i, m_i, q, k_base, v_base, skn, skd, svn, svd, rows, diag,
                                  tl.minimum(diag + BLOCK_M, N_K), N_K, qk_scale, offs_d, HEAD_DIM, BLOCK_D,
                                  BLOCK_N, 1, PRECISION)
    else:
        full = (N_K // BLOCK_N) * BLOCK_N
        acc, l_i, m_i = _fwd_keys(acc, l_i, m_i, q, k_base, v_base, skn, skd, svn, svd, rows, 0, full, N_K,
                                  qk_scale, offs_d, HEAD_DIM, BLOCK_D, BLOCK_N, 0, PRECISION)
        acc, l_i, m_i = _fwd_keys(acc, l_i, m_i, q, k_base, v_base, skn, skd, svn, svd, rows, full, N_K, N_K,
                                  qk_scale, offs_d, HEAD_DIM, BLOCK_D, BLOCK_N, 2, PRECISION)
    out = acc / l_i[:, None]
    lse = (m_i + tl.log2(l_i)) * 0.6931471805599453  # ln 2: back to the natural log
    _put(O + b * sob + h * soh, rows, N_Q, son, sod, offs_d, out.to(O.dtype.element_ty), HEAD_DIM)
    tl.store(LSE + bh.to(tl.int64) * N_Q + rows, lse, mask=rows < N_Q)


@triton.jit
def _delta_kernel(O, DO, DLSE, DELTA, N_Q, HEADS, sob, soh, son, sod, sdob, sdoh, sdon, sdod,
                  HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, HAS_DLSE: tl.constexpr, BLOCK_M: tl.constexpr):
    # delta = rowsum(dO * O) - dLSE: d lse / d s = softmax(s), so dLSE enters dS exactly like delta does.
    bh = tl.program_id(1)
    b, h = (bh // HEADS).to(tl.int64), (bh % HEADS).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    o = _tile(O + b * sob + h * soh, rows, N_Q, son, sod, offs_d, HEAD_DIM, BLOCK_D, True).to(tl.float32)
    do = _tile(DO + b * sdob + h * sdoh, rows, N_Q, sdon, sdod, offs_d, HEAD_DIM, BLOCK_D, True).to(tl.float32)
    delta = tl.sum(o * do, 1)
    at = bh.to(tl.int64) * N_Q + rows
    if HAS_DLSE:
        delta -= tl.load(DLSE + at, mask=rows < N_Q, other=0.0)
    tl.store(DELTA + at, delta, mask=rows < N_Q)


@triton.jit
def _dkdv_queries(dk, dv, k, v, q_base, do_base, lse_base, delta_base, sqn, sqd, sdon, sdod, cols, lo, hi, N_Q,
                  qk_scale, offs_d, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr,
                  CAUSAL_MASK: tl.constexpr, PRECISION: tl.constexpr):
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
def _dkdv_kernel(Q, K, V, DO, LSE, DELTA, DK, DV, qk_scale, sm_scale, N_Q, N_K, HEADS, TUNE_N,
                 sqb, sqh, sqn, sqd, skb, skh, skn, skd, svb, svh, svn, svd, sdob, sdoh, sdon, sdod,
                 HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
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
        dk, dv = _dkdv_queries(dk, dv, k, v, q_base, do_base, lse_base, delta_base, sqn, sqd, sdon, sdod, cols,
                               diag, tl.minimum(diag + BLOCK_N, N_Q), N_Q, qk_scale, offs_d, HEAD_DIM, BLOCK_D,
                               BLOCK_M, True, PRECISION)
        dk, dv = _dkdv_queries(dk, dv, k, v, q_base, do_base, lse_base, delta_base, sqn, sqd, sdon, sdod, cols,
                               diag + BLOCK_N, N_Q, N_Q, qk_scale, offs_d, HEAD_DIM, BLOCK_D, BLOCK_M, False,
                               PRECISION)
    else:
        dk, dv = _dkdv_queries(dk, dv, k, v, q_base, do_base, lse_base, delta_base, sqn, sqd, sdon, sdod, cols,
                               0, N_Q, N_Q, qk_scale, offs_d, HEAD_DIM, BLOCK_D, BLOCK_M, False, PRECISION)
    at = bh.to(tl.int64) * N_K * HEAD_DIM  # DK and DV are contiguous (B, H, N_K, HEAD_DIM)
    _put(DK + at, cols, N_K, HEAD_DIM, 1, offs_d, (dk * sm_scale).to(DK.dtype.element_ty), HEAD_DIM)
    _put(DV + at, cols, N_K, HEAD_DIM, 1, offs_d, dv.to(DV.dtype.element_ty), HEAD_DIM)


@triton.jit
def _dq_keys(dq, q, do, lse2, delta, k_base, v_base, skn, skd, svn, svd, rows, lo, hi, N_K, qk_scale, offs_d,
             HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr,
             PRECISION: tl.constexpr):
    # Accumulate this query block's dQ (without the scale) over key blocks [lo, hi); MASK as in _fwd_keys.
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
def _dq_kernel(Q, K, V, DO, LSE, DELTA, DQ, qk_scale, sm_scale, N_Q, N_K, HEADS, TUNE_N,
               sqb, sqh, sqn, sqd, skb, skh, skn, skd, svb, svh, svn, svd, sdob, sdoh, sdon, sdod,
               HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
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
        dq = _dq_keys(dq, q, do, lse2, delta, k_base, v_base, skn, skd, svn, svd, rows, 0, diag, N_K, qk_scale,
                      offs_d, HEAD_DIM, BLOCK_D, BLOCK_N, 0, PRECISION)
        dq = _dq_keys(dq, q, do, lse2, delta, k_base, v_base, skn, skd, svn, svd, rows, diag,
                      tl.minimum(diag + BLOCK_M, N_K), N_K, qk_scale, offs_d, HEAD_DIM, BLOCK_D, BLOCK_N, 1,
                      PRECISION)
    else:
        full = (N_K // BLOCK_N) * BLOCK_N
        dq = _dq_keys(dq, q, do, lse2, delta, k_base, v_base, skn, skd, svn, svd, rows, 0, full, N_K, qk_scale,
                      offs_d, HEAD_DIM, BLOCK_D, BLOCK_N, 0, PRECISION)
        dq = _dq_keys(dq, q, do, lse2, delta, k_base, v_base, skn, skd, svn, svd, rows, full, N_K, N_K, qk_scale,
                      offs_d, HEAD_DIM, BLOCK_D, BLOCK_N, 2, PRECISION)
    _put(DQ + bh.to(tl.int64) * N_Q * HEAD_DIM, rows, N_Q, HEAD_DIM, 1, offs_d,
         (dq * sm_scale).to(DQ.dtype.element_ty), HEAD_DIM)


def _strides(t):
    return [t.stride(i) for i in range(4)]


def _meta(q, causal: bool) -> dict:
    d = q.shape[-1]
    precision = "ieee" if q.dtype == torch.float32 else "tf32"  # fp32 stays exact IEEE (no TF32 rounding)
    return dict(HEAD_DIM=d, BLOCK_D=max(16, triton.next_power_of_2(d)), CAUSAL=bool(causal), PRECISION=precision)


def triton_forward(q, k, v, scale: float, causal: bool, blocks: tuple[int, ...] | None = None):
    """``(out (B, H, N_q, d), lse (B, H, N_q) float32, natural log)``. ``blocks`` forces a config
    (``triton_tuning.launcher``) instead of the autotuned one."""
    B, H, N_q, _ = q.shape
    N_k = k.shape[2]
    out = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty((B, H, N_q), device=q.device, dtype=torch.float32)
    qk_scale = scale * 1.44269504  # 1/ln 2: exp(x) == exp2(x / ln 2), so the kernel works in base 2

    def grid(meta):
        return (triton.cdiv(N_q, meta["BLOCK_M"]), B * H)

    launcher(_fwd_kernel, "fwd", q, blocks)[grid](
        q, k, v, out, lse, qk_scale, N_q, N_k, H, tune_n(N_q, N_k),
        *_strides(q), *_strides(k), *_strides(v), *_strides(out), **_meta(q, causal))
    return out, lse


def triton_backward(q, k, v, out, lse, d_out, scale: float, causal: bool, d_lse=None,
                    blocks: tuple[tuple[int, ...], tuple[int, ...]] | None = None):
    """``(dq, dk, dv)``. ``blocks`` forces (the dK/dV config, the dQ config), as in ``triton_forward``."""
    B, H, N_q, d = q.shape
    N_k = k.shape[2]
    meta = _meta(q, causal)
    d_out = d_out.contiguous()
    delta = torch.empty((B, H, N_q), device=q.device, dtype=torch.float32)
    has_dlse = d_lse is not None
    d_lse = d_lse.float().contiguous() if has_dlse else delta  # not read when has_dlse is False
    _delta_kernel[(triton.cdiv(N_q, 64), B * H)](out, d_out, d_lse, delta, N_q, H, *_strides(out), *_strides(d_out),
                                                 HEAD_DIM=d, BLOCK_D=meta["BLOCK_D"], HAS_DLSE=has_dlse, BLOCK_M=64)
    dq = torch.empty((B, H, N_q, d), device=q.device, dtype=q.dtype)
    dk = torch.empty((B, H, N_k, d), device=q.device, dtype=k.dtype)
    dv = torch.empty((B, H, N_k, d), device=q.device, dtype=v.dtype)
    args = (scale * 1.44269504, scale, N_q, N_k, H, tune_n(N_q, N_k),  # 1/ln 2, as in the forward pass
            *_strides(q), *_strides(k), *_strides(v), *_strides(d_out))
    kv_blocks, q_blocks = blocks if blocks is not None else (None, None)
    launcher(_dkdv_kernel, "dkdv", q, kv_blocks)[lambda meta: (triton.cdiv(N_k, meta["BLOCK_N"]), B * H)](
        q, k, v, d_out, lse, delta, dk, dv, *args, **meta)
    launcher(_dq_kernel, "dq", q, q_blocks)[lambda meta: (triton.cdiv(N_q, meta["BLOCK_M"]), B * H)](
        q, k, v, d_out, lse, delta, dq, *args, **meta)
    return dq, dk, dv
