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

This module launches the kernels; each lives in its own module: the forward kernel in :mod:`.triton_fwd`, the
delta kernel in :mod:`.triton_delta`, the dK/dV kernel in :mod:`.triton_dkdv`, the dQ kernel in :mod:`.triton_dq`,
and the tile loads and stores they share in :mod:`.triton_tiles`.
"""

from __future__ import annotations

import torch
import triton

from .triton_delta import _delta_kernel
from .triton_dkdv import _dkdv_kernel
from .triton_dq import _dq_kernel
from .triton_fwd import _fwd_kernel
from .triton_tuning import launcher, tune_n


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
        q,
        k,
        v,
        out,
        lse,
        qk_scale,
        N_q,
        N_k,
        H,
        tune_n(N_q, N_k),
        *_strides(q),
        *_strides(k),
        *_strides(v),
        *_strides(out),
        **_meta(q, causal),
    )
    return out, lse


def triton_backward(
    q,
    k,
    v,
    out,
    lse,
    d_out,
    scale: float,
    causal: bool,
    d_lse=None,
    blocks: tuple[tuple[int, ...], tuple[int, ...]] | None = None,
):
    """``(dq, dk, dv)``. ``blocks`` forces (the dK/dV config, the dQ config), as in ``triton_forward``."""
    B, H, N_q, d = q.shape
    N_k = k.shape[2]
    meta = _meta(q, causal)
    d_out = d_out.contiguous()
    delta = torch.empty((B, H, N_q), device=q.device, dtype=torch.float32)
    has_dlse = d_lse is not None
    d_lse = d_lse.float().contiguous() if has_dlse else delta  # not read when has_dlse is False
    _delta_kernel[(triton.cdiv(N_q, 64), B * H)](
        out,
        d_out,
        d_lse,
        delta,
        N_q,
        H,
        *_strides(out),
        *_strides(d_out),
        HEAD_DIM=d,
        BLOCK_D=meta["BLOCK_D"],
        HAS_DLSE=has_dlse,
        BLOCK_M=64,
    )
    dq = torch.empty((B, H, N_q, d), device=q.device, dtype=q.dtype)
    dk = torch.empty((B, H, N_k, d), device=q.device, dtype=k.dtype)
    dv = torch.empty((B, H, N_k, d), device=q.device, dtype=v.dtype)
    args = (
        scale * 1.44269504,
        scale,
        N_q,
        N_k,
        H,
        tune_n(N_q, N_k),  # 1/ln 2, as in the forward pass
        *_strides(q),
        *_strides(k),
        *_strides(v),
        *_strides(d_out),
    )
    kv_blocks, q_blocks = blocks if blocks is not None else (None, None)
    launcher(_dkdv_kernel, "dkdv", q, kv_blocks)[lambda meta: (triton.cdiv(N_k, meta["BLOCK_N"]), B * H)](
        q, k, v, d_out, lse, delta, dk, dv, *args, **meta
    )
    launcher(_dq_kernel, "dq", q, q_blocks)[lambda meta: (triton.cdiv(N_q, meta["BLOCK_M"]), B * H)](
        q, k, v, d_out, lse, delta, dq, *args, **meta
    )
    return dq, dk, dv
