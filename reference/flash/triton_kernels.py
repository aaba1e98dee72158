"""Fused attention kernels in Triton (FlashAttention-2's schedule), forward and backward.

References: Dao et al., "FlashAttention" (2022) and "FlashAttention-2" (2023). The forward kernel
keeps a query block in registers and streams key/value blocks past it with an online softmax, in base
2 (``exp2``) so the scale folds into one multiply. The backward pass uses two kernels: one owns a key
block and accumulates dK and dV over query blocks, the other owns a query block and accumulates dQ;
both recompute probabilities from the saved log-sum-exp. Tensors are (B, H, N, d) with any strides.

Importing this module touches no GPU driver; kernels compile on first call (or run in Triton's
interpreter when TRITON_INTERPRET=1 was set before triton was imported).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634  # 1 / ln 2: exp(x) == exp2(x * LOG2E)
LN2 = 0.6931471805599453


@triton.jit
def _fwd_kernel(Q, K, V, O, LSE, sm_scale, N_Q, N_K, HEADS,
                sqb, sqh, sqn, sqd, skb, skh, skn, skd, svb, svh, svn, svd, sob, soh, son, sod,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b, h = bh // HEADS, bh % HEADS
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    q = tl.load(Q + b * sqb + h * sqh + offs_m[:, None] * sqn + offs_d[None, :] * sqd,
                mask=(offs_m[:, None] < N_Q) & d_ok[None, :], other=0.0)  # (BLOCK_M, BLOCK_D)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)  # running max, base-2 units
    l_i = tl.zeros([BLOCK_M], tl.float32)  # running sum of exp2(s - m_i)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # fold 1/ln 2 into the scale
    hi = N_K
    if CAUSAL:
        hi = tl.minimum(N_K, (start_m + 1) * BLOCK_M)  # later key blocks are all in the future
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + b * skb + h * skh + cols[None, :] * skn + offs_d[:, None] * skd,
                    mask=(cols[None, :] < N_K) & d_ok[:, None], other=0.0)  # (BLOCK_D, BLOCK_N), transposed
        s = tl.dot(q, k, input_precision=PRECISION) * qk_scale  # (BLOCK_M, BLOCK_N)
        visible = cols[None, :] < N_K
        if CAUSAL:
            visible = visible & (cols[None, :] <= offs_m[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row that has seen nothing yet
        p = tl.exp2(s - m_safe[:, None])
        alpha = tl.exp2(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + b * svb + h * svh + cols[:, None] * svn + offs_d[None, :] * svd,
                    mask=(cols[:, None] < N_K) & d_ok[None, :], other=0.0)  # (BLOCK_N, BLOCK_D)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m_i = m_new
    l_safe = tl.where(l_i > 0, l_i, 1.0)
    out = acc / l_safe[:, None]
    lse = tl.where(l_i > 0, (m_i + tl.log2(l_safe)) * 0.6931471805599453, float("-inf"))  # natural log
    row_ok = offs_m < N_Q
    tl.store(O + b * sob + h * soh + offs_m[:, None] * son + offs_d[None, :] * sod, out.to(O.dtype.element_ty),
             mask=row_ok[:, None] & d_ok[None, :])
    tl.store(LSE + bh * N_Q + offs_m, lse, mask=row_ok)


@triton.jit
def _bwd_dkdv_kernel(Q, K, V, DO, LSE, DELTA, DK, DV, sm_scale, N_Q, N_K, HEADS,
                     sqb, sqh, sqn, sqd, skb, skh, skn, skd, svb, svh, svn, svd,
                     sdob, sdoh, sdon, sdod,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                     CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
    start_n = tl.program_id(0)
    bh = tl.program_id(1)
    b, h = bh // HEADS, bh % HEADS
    cols = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    col_ok = cols < N_K
    k = tl.load(K + b * skb + h * skh + cols[:, None] * skn + offs_d[None, :] * skd,
                mask=col_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_N, BLOCK_D)
    v = tl.load(V + b * svb + h * svh + cols[:, None] * svn + offs_d[None, :] * svd,
                mask=col_ok[:, None] & d_ok[None, :], other=0.0)
    dk = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)
    dv = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)
    lo = 0
    if CAUSAL:
        lo = (start_n * BLOCK_N // BLOCK_M) * BLOCK_M  # earlier queries cannot see this key block
    for start_m in range(lo, N_Q, BLOCK_M):
        rows = start_m + tl.arange(0, BLOCK_M)
        row_ok = rows < N_Q
        q = tl.load(Q + b * sqb + h * sqh + rows[:, None] * sqn + offs_d[None, :] * sqd,
                    mask=row_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_M, BLOCK_D)
        do = tl.load(DO + b * sdob + h * sdoh + rows[:, None] * sdon + offs_d[None, :] * sdod,
                     mask=row_ok[:, None] & d_ok[None, :], other=0.0)
        lse = tl.load(LSE + bh * N_Q + rows, mask=row_ok, other=0.0)
        delta = tl.load(DELTA + bh * N_Q + rows, mask=row_ok, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * sm_scale  # (BLOCK_M, BLOCK_N)
        visible = row_ok[:, None] & col_ok[None, :]
        if CAUSAL:
            visible = visible & (cols[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp2((s - lse[:, None]) * 1.4426950408889634), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PRECISION)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)  # (BLOCK_M, BLOCK_N)
        ds = p * (dp - delta[:, None]) * sm_scale
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PRECISION)
    tl.store(DK + bh * N_K * HEAD_DIM + cols[:, None] * HEAD_DIM + offs_d[None, :], dk.to(DK.dtype.element_ty),
             mask=col_ok[:, None] & d_ok[None, :])
    tl.store(DV + bh * N_K * HEAD_DIM + cols[:, None] * HEAD_DIM + offs_d[None, :], dv.to(DV.dtype.element_ty),
             mask=col_ok[:, None] & d_ok[None, :])


@triton.jit
def _bwd_dq_kernel(Q, K, V, DO, LSE, DELTA, DQ, sm_scale, N_Q, N_K, HEADS,
                   sqb, sqh, sqn, sqd, skb, skh, skn, skd, svb, svh, svn, svd,
                   sdob, sdoh, sdon, sdod,
                   HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                   CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b, h = bh // HEADS, bh % HEADS
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    row_ok = rows < N_Q
    q = tl.load(Q + b * sqb + h * sqh + rows[:, None] * sqn + offs_d[None, :] * sqd,
                mask=row_ok[:, None] & d_ok[None, :], other=0.0)
    do = tl.load(DO + b * sdob + h * sdoh + rows[:, None] * sdon + offs_d[None, :] * sdod,
                 mask=row_ok[:, None] & d_ok[None, :], other=0.0)
    lse = tl.load(LSE + bh * N_Q + rows, mask=row_ok, other=0.0)
    delta = tl.load(DELTA + bh * N_Q + rows, mask=row_ok, other=0.0)
    dq = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    hi = N_K
    if CAUSAL:
        hi = tl.minimum(N_K, (start_m + 1) * BLOCK_M)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        col_ok = cols < N_K
        k = tl.load(K + b * skb + h * skh + cols[:, None] * skn + offs_d[None, :] * skd,
                    mask=col_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_N, BLOCK_D)
        v = tl.load(V + b * svb + h * svh + cols[:, None] * svn + offs_d[None, :] * svd,
                    mask=col_ok[:, None] & d_ok[None, :], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * sm_scale
        visible = row_ok[:, None] & col_ok[None, :]
        if CAUSAL:
            visible = visible & (cols[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp2((s - lse[:, None]) * 1.4426950408889634), 0.0)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        ds = p * (dp - delta[:, None]) * sm_scale
        dq += tl.dot(ds.to(k.dtype), k, input_precision=PRECISION)
    tl.store(DQ + bh * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + offs_d[None, :], dq.to(DQ.dtype.element_ty),
             mask=row_ok[:, None] & d_ok[None, :])


def _config(q):
    d = q.shape[-1]
    block_d = max(16, triton.next_power_of_2(d))
    precision = "ieee" if q.dtype == torch.float32 else "tf32"  # fp32 stays exact IEEE (no TF32 rounding)
    if q.is_cuda:
        block_m, block_n = (128, 64) if block_d <= 64 else (64, 64)
        if q.dtype == torch.float32:
            block_m, block_n = 64, 32
    else:  # the interpreter: small blocks keep it quick
        block_m, block_n = 32, 32
    return d, block_d, block_m, block_n, precision


def _strides(t):
    return [t.stride(i) for i in range(4)]


def triton_forward(q, k, v, scale: float, causal: bool):
    B, H, N_q, _ = q.shape
    N_k = k.shape[2]
    d, block_d, block_m, block_n, precision = _config(q)
    out = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty((B, H, N_q), device=q.device, dtype=torch.float32)
    grid = (triton.cdiv(N_q, block_m), B * H)
    _fwd_kernel[grid](q, k, v, out, lse, scale, N_q, N_k, H, *_strides(q), *_strides(k), *_strides(v), *_strides(out),
                      HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=block_d, CAUSAL=causal, PRECISION=precision)
    return out, lse


def triton_backward(q, k, v, out, lse, d_out, scale: float, causal: bool, d_lse=None):
    B, H, N_q, _ = q.shape
    N_k = k.shape[2]
    d, block_d, block_m, block_n, precision = _config(q)
    d_out = d_out.contiguous()
    delta = (d_out.float() * out.float()).sum(-1)  # (B, H, N_q): rowsum(dO * O)
    if d_lse is not None:
        delta = delta - d_lse.float()  # d lse / d s = softmax, folded into the same correction
    delta = delta.contiguous()
    dq = torch.empty((B, H, N_q, d), device=q.device, dtype=q.dtype)
    dk = torch.empty((B, H, N_k, d), device=q.device, dtype=k.dtype)
    dv = torch.empty((B, H, N_k, d), device=q.device, dtype=v.dtype)
    common = dict(HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=block_d, CAUSAL=causal, PRECISION=precision)
    strides = (*_strides(q), *_strides(k), *_strides(v), *_strides(d_out))
    _bwd_dkdv_kernel[(triton.cdiv(N_k, block_n), B * H)](q, k, v, d_out, lse, delta, dk, dv, scale, N_q, N_k, H, *strides, **common)
    _bwd_dq_kernel[(triton.cdiv(N_q, block_m), B * H)](q, k, v, d_out, lse, delta, dq, scale, N_q, N_k, H, *strides, **common)
    return dq, dk, dv
