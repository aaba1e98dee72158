"""FlashAttention's algorithm on any device in plain torch, in O(N * block) memory.

Queries and keys are both visited in tiles. For each query tile the running triple (row max m, sum of
exponentials l, unnormalised output acc) is the partial result of :mod:`.merge` kept unnormalised:
``lse = m + log l`` and ``out = acc / l``. Folding one more key tile into it is exactly
``merge_partials(state, partial of the tile)``, done in place so each tile costs one ``exp`` pass and no
fresh N x N buffer. Backward recomputes each tile's probabilities from the saved LSE.
"""

from __future__ import annotations

import torch

BLOCK_Q = 256
BLOCK_K = 512


def _mask_future(s: torch.Tensor, q0: int, k0: int) -> None:
    """In place: -inf where key k0 + j lies after query q0 + i (only tiles crossing the diagonal need it)."""
    n_q, n_k = s.shape[-2:]
    if k0 + n_k - 1 <= q0:
        return
    rows = torch.arange(q0, q0 + n_q, device=s.device)[:, None]
    cols = torch.arange(k0, k0 + n_k, device=s.device)[None, :]
    s.masked_fill_(cols > rows, float("-inf"))


def tiled_forward(q, k, v, scale: float, causal: bool, block_q: int = BLOCK_Q, block_k: int = BLOCK_K):
    """Returns ``(out (B, H, N_q, d_v), lse (B, H, N_q))``, accumulating in at least float32."""
    acc_t = torch.promote_types(q.dtype, torch.float32)
    B, H, N, _ = q.shape
    N_k = k.shape[-2]
    out = torch.empty(B, H, N, v.shape[-1], dtype=q.dtype, device=q.device)
    lse = torch.empty(B, H, N, dtype=acc_t, device=q.device)
    kT = k.to(acc_t).transpose(-2, -1)  # (B, H, d, N_k)
    vf = v.to(acc_t)
    for q0 in range(0, N, block_q):
        qb = q[:, :, q0 : q0 + block_q].to(acc_t) * scale  # (B, H, n_q, d), scale folded in once
        n_q = qb.shape[-2]
        m = torch.full((B, H, n_q), float("-inf"), dtype=acc_t, device=q.device)  # running row max
        l = torch.zeros((B, H, n_q), dtype=acc_t, device=q.device)  # running sum of exp(s - m)
        acc = torch.zeros((B, H, n_q, v.shape[-1]), dtype=acc_t, device=q.device)  # running sum of exp(s - m) v
        k_end = min(N_k, q0 + n_q) if causal else N_k  # later keys are all in the future
        for k0 in range(0, k_end, block_k):
            s = qb @ kT[..., k0 : k0 + block_k]  # (B, H, n_q, n_k)
            if causal:
                _mask_future(s, q0, k0)
            m_new = torch.maximum(m, s.amax(dim=-1))
            m_safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)  # rows that saw nothing yet
            p = s.sub_(m_safe[..., None]).exp_()  # in place: s becomes p
            alpha = torch.exp(m - m_safe)  # rescales what was accumulated under the old max
            l.mul_(alpha).add_(p.sum(dim=-1))
            acc.mul_(alpha[..., None]).add_(p @ vf[:, :, k0 : k0 + block_k])
            m = m_new
        seen = l > 0
        out[:, :, q0 : q0 + n_q] = (acc / torch.where(seen, l, torch.ones_like(l))[..., None]).to(q.dtype)
        lse[:, :, q0 : q0 + n_q] = torch.where(
            seen, m + torch.log(torch.where(seen, l, torch.ones_like(l))), torch.full_like(l, float("-inf"))
        )
    return out, lse


def tiled_backward(
    q, k, v, out, lse, d_out, scale: float, causal: bool, block_q: int = BLOCK_Q, block_k: int = BLOCK_K, d_lse=None
):
    acc_t = torch.promote_types(q.dtype, torch.float32)
    qf, kf, vf, dof = (t.to(acc_t) for t in (q, k, v, d_out))
    N, N_k = q.shape[-2], k.shape[-2]
    delta = (dof * out.to(acc_t)).sum(-1)  # (B, H, N): rowsum(dO * O)
    if d_lse is not None:
        delta = delta - d_lse.to(acc_t)  # d lse / d s = softmax(s): the same correction as delta
    lse_safe = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))
    dq, dk, dv = torch.zeros_like(qf), torch.zeros_like(kf), torch.zeros_like(vf)
    for q0 in range(0, N, block_q):
        qb, dob = qf[:, :, q0 : q0 + block_q], dof[:, :, q0 : q0 + block_q]
        n_q = qb.shape[-2]
        k_end = min(N_k, q0 + n_q) if causal else N_k
        for k0 in range(0, k_end, block_k):
            kb, vb = kf[:, :, k0 : k0 + block_k], vf[:, :, k0 : k0 + block_k]
            s = (qb @ kb.transpose(-2, -1)) * scale  # (B, H, n_q, n_k)
            if causal:
                _mask_future(s, q0, k0)
            p = s.sub_(lse_safe[:, :, q0 : q0 + n_q, None]).exp_()  # probabilities, recomputed in place
            dv[:, :, k0 : k0 + block_k] += p.transpose(-2, -1) @ dob  # (B, H, n_k, d_v)
            ds = (
                (dob @ vb.transpose(-2, -1)).sub_(delta[:, :, q0 : q0 + n_q, None]).mul_(p).mul_(scale)
            )  # (B, H, n_q, n_k)
            dq[:, :, q0 : q0 + n_q] += ds @ kb
            dk[:, :, k0 : k0 + block_k] += ds.transpose(-2, -1) @ qb
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
