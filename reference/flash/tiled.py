"""FlashAttention's algorithm on any device in plain torch: keys are visited block by block and
partial results merged, so memory is O(N * block) instead of O(N^2). Backward recomputes each block's
probabilities from the saved log-sum-exp instead of storing them."""
from __future__ import annotations

import torch

from .merge import empty_partial, merge_partials, partial_attention

DEFAULT_BLOCK = 256


def _block_scores(q, k_blk, scale, causal, q0, k0):
    """Scores of queries q0.. against keys k0.. of one block, -inf where a key lies in a query's future."""
    s = (q @ k_blk.transpose(-2, -1)) * scale  # (B, H, n_q, n_k)
    if causal:
        rows = torch.arange(q0, q0 + q.shape[-2], device=q.device)[:, None]
        cols = torch.arange(k0, k0 + k_blk.shape[-2], device=q.device)[None, :]
        s = s.masked_fill(cols > rows, float("-inf"))
    return s


def tiled_forward(q, k, v, scale: float, causal: bool, block: int = DEFAULT_BLOCK):
    """Returns ``(out (B, H, N, d_v), lse (B, H, N))``, accumulating in at least float32."""
    acc = torch.promote_types(q.dtype, torch.float32)
    qf, kf, vf = q.to(acc), k.to(acc), v.to(acc)
    B, H, N, _ = q.shape
    state = empty_partial((B, H, N), v.shape[-1], dtype=acc, device=q.device)
    for k0 in range(0, k.shape[-2], block):
        q0 = k0 if causal else 0  # with a causal mask, queries before k0 see nothing in this block
        if q0 >= N:
            break
        scores = _block_scores(qf[:, :, q0:], kf[:, :, k0:k0 + block], scale, causal, q0, k0)  # (B, H, N-q0, n_k)
        lse_b, out_b = partial_attention(scores, vf[:, :, k0:k0 + block])
        lse, out = merge_partials((state[0][:, :, q0:], state[1][:, :, q0:]), (lse_b, out_b))
        state[0][:, :, q0:], state[1][:, :, q0:] = lse, out
    return state[1].to(q.dtype), state[0]


def tiled_backward(q, k, v, out, lse, d_out, scale: float, causal: bool, block: int = DEFAULT_BLOCK, d_lse=None):
    acc = torch.promote_types(q.dtype, torch.float32)
    qf, kf, vf, of, dof = (t.to(acc) for t in (q, k, v, out, d_out))
    N = q.shape[-2]
    delta = (dof * of).sum(-1)  # (B, H, N): rowsum(dO * O)
    if d_lse is not None:
        delta = delta - d_lse.to(acc)  # d lse / d s = softmax(s): the same correction as delta
    dq, dk, dv = torch.zeros_like(qf), torch.zeros_like(kf), torch.zeros_like(vf)
    lse_safe = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))
    for k0 in range(0, k.shape[-2], block):
        q0 = k0 if causal else 0
        if q0 >= N:
            break
        k_blk, v_blk = kf[:, :, k0:k0 + block], vf[:, :, k0:k0 + block]
        s = _block_scores(qf[:, :, q0:], k_blk, scale, causal, q0, k0)  # (B, H, n_q, n_k)
        p = torch.exp(s - lse_safe[:, :, q0:, None])  # probabilities, recomputed
        dv[:, :, k0:k0 + block] = p.transpose(-2, -1) @ dof[:, :, q0:]  # (B, H, n_k, d_v)
        dp = dof[:, :, q0:] @ v_blk.transpose(-2, -1)  # (B, H, n_q, n_k)
        ds = p * (dp - delta[:, :, q0:, None]) * scale
        dq[:, :, q0:] += ds @ k_blk
        dk[:, :, k0:k0 + block] = ds.transpose(-2, -1) @ qf[:, :, q0:]
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
