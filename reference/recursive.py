"""Reference for the ``recursive_attention`` assignment: attention over a key set as a merge of partial
states, online softmax, tiled (FlashAttention) attention, and its HBM traffic.

A *partial state* of one query over a set of keys J is ``(s, v)``: ``s = log sum_{j in J} exp(q.k_j / sqrt(d))``
and ``v`` the softmax-weighted average of the values over J alone. States of disjoint key sets merge into
the state of their union (reference.flash.merge); the empty set's state, ``(-inf, 0)``, is the merge's
identity. Everything here works for one query ``q (d,)`` or several ``q (Nq, d)``.
"""

from __future__ import annotations

import math

import torch

from .flash import flash_attention, merge_partials

__all__ = [
    "attention_partial",
    "merge",
    "online_softmax_attention",
    "tiled_attention",
    "flash_forward",
    "attention_io",
    "full_attention",
    "TILING_DOES_NOT_HELP",
]


def _scores(q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    return (q @ K.transpose(-2, -1)) / math.sqrt(q.shape[-1])  # (Nk,) or (Nq, Nk)


def attention_partial(q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(s, v)``: the log-sum-exp of the scaled scores and the softmax-weighted values over the keys K.
    With no keys (``K`` of shape (0, d)) this is the empty state: ``s = -inf``, ``v = 0``."""
    for name, t, dims in (("q", q, (1, 2)), ("K", K, (2,)), ("V", V, (2,))):
        if not isinstance(t, torch.Tensor) or t.ndim not in dims:
            raise ValueError(
                f"attention_partial: {name} must be a tensor with {' or '.join(map(str, dims))} dimensions; "
                f"got {tuple(getattr(t, 'shape', ())) or type(t).__name__}"
            )
    if K.shape != (V.shape[0], q.shape[-1]):
        raise ValueError(
            f"attention_partial: K must have shape (Nk, d) = ({V.shape[0]}, {q.shape[-1]}) to match q and V; "
            f"got {tuple(K.shape)}"
        )
    if K.shape[0] == 0:
        shape = q.shape[:-1]
        return (
            torch.full(shape, float("-inf"), dtype=q.dtype),
            torch.zeros(*shape, V.shape[-1], dtype=V.dtype),
        )  # (), (dv,) or (Nq,), (Nq, dv)
    scores = _scores(q, K)
    return torch.logsumexp(scores, dim=-1), torch.softmax(scores, dim=-1) @ V


def merge(
    a: tuple[torch.Tensor, torch.Tensor], b: tuple[torch.Tensor, torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    """The state of the union of two disjoint key sets, from their states (stable for any scores)."""
    (s_a, v_a), (s_b, v_b) = a, b
    return merge_partials((torch.as_tensor(s_a), v_a), (torch.as_tensor(s_b), v_b))


def full_attention(q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q K^T / sqrt(d)) V computed in float64 (with a causal mask when asked), for checking others."""
    scores = _scores(q.double(), K.double())
    if causal:
        future = torch.ones(scores.shape[-2:], dtype=torch.bool).triu(1)  # (Nq, Nk): key j after query i
        scores = scores.masked_fill(future, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V.double()


def online_softmax_attention(q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, block_size: int) -> torch.Tensor:
    """softmax(q K^T / sqrt(d)) V in one pass over blocks of ``block_size`` keys, holding a running max,
    sum and weighted sum: never more than (Nq, block_size) scores at once."""
    if not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be a positive int; got {block_size!r}")
    single = q.ndim == 1
    q2 = q[None] if single else q  # (Nq, d)
    acc_t = torch.promote_types(q.dtype, torch.float32)
    m = torch.full(q2.shape[:1], float("-inf"), dtype=acc_t)  # (Nq,): running max
    total = torch.zeros(q2.shape[:1], dtype=acc_t)  # (Nq,): running sum of exp(score - m)
    acc = torch.zeros(q2.shape[0], V.shape[-1], dtype=acc_t)  # (Nq, dv): running sum of exp(score - m) v
    for start in range(0, K.shape[0], block_size):
        s = _scores(q2.to(acc_t), K[start : start + block_size].to(acc_t))  # (Nq, b)
        m_new = torch.maximum(m, s.amax(dim=-1))
        rescale = torch.exp(m - m_new)  # (Nq,): 0 on the first block (m = -inf)
        p = torch.exp(s - m_new[:, None])  # (Nq, b)
        total = total * rescale + p.sum(dim=-1)
        acc = acc * rescale[:, None] + p @ V[start : start + block_size].to(acc_t)
        m = m_new
    y = (acc / total[:, None]).to(q.dtype)  # (Nq, dv)
    return y[0] if single else y


def tiled_attention(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, block_q: int, block_k: int, causal: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(O (Nq, dv), lse (Nq,))``: the fused reference (reference.flash: the Triton kernel on CUDA, the
    tiled torch path elsewhere), on 2-D inputs."""
    out, lse = flash_attention(Q[None, None], K[None, None], V[None, None], causal=causal, return_lse=True)
    return out[0, 0], lse[0, 0].to(Q.dtype)  # (Nq, dv), (Nq,)


def flash_forward(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, causal: bool = False, block_m: int = 16, block_n: int = 16
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(O (Nq, d), lse (Nq,))`` in float32, as the bonus exercise's Triton kernel and its launch code return
    them: the fused reference on the inputs cast to float32 (its blocks are its own; the result does not
    depend on them)."""
    Q, K, V = (t.to(torch.float32) for t in (Q, K, V))
    return tiled_attention(Q, K, V, block_m, block_n, causal)


def attention_io(N: int, d: int, M: int) -> tuple[int, int]:
    """HBM element reads and writes of standard attention and of FlashAttention's forward pass, under the
    notebook's accounting: standard reads Q, K (2Nd), writes and reads S and P (4N^2), reads V and writes
    O (2Nd); FlashAttention makes key/value blocks of B = M // (4d) rows, reads K and V once (2Nd) and,
    for each of the ceil(N / B) blocks, reads Q and O and writes O (3Nd)."""
    for name, value in (("N", N), ("d", d), ("M", M)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int; got {value!r}")
    block = M // (4 * d)
    if block < 1:
        raise ValueError(f"M = {M} is too small for d = {d}: a block needs M >= 4d")
    return 4 * N * d + 4 * N * N, 2 * N * d + 3 * N * d * (-(-N // block))


# When does tiling not reduce HBM traffic? When the on-chip memory holds only about d^2 elements or
# fewer: a block then has about d / 4 rows or fewer and Q and O are re-read about N / (M / 4d) times, so
# N^2 d^2 / M is no longer smaller than N^2.
TILING_DOES_NOT_HELP = "B"
