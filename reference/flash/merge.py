"""Partial attention results and the rule that merges them.

For one query and an index set I of keys with scores s_i, the partial result is the pair
``(lse(I), out(I))`` with ``lse(I) = log sum_{i in I} exp(s_i)`` and ``out(I) = sum_{i in I} softmax(s)_i v_i``
(the softmax taken over I only). For disjoint I and J:

    lse(I ∪ J) = logaddexp(lse(I), lse(J))
    out(I ∪ J) = exp(lse(I) - lse(I ∪ J)) out(I) + exp(lse(J) - lse(I ∪ J)) out(J)

The rule is associative and commutative, and the empty set, ``(-inf, 0)``, is its identity; this is what
lets FlashAttention visit the keys block by block and never hold the whole score matrix.
"""

from __future__ import annotations

import torch

__all__ = ["merge_partials", "empty_partial", "partial_attention"]


def empty_partial(batch_shape, d: int, *, dtype=torch.float32, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """The identity of the merge: no keys seen, ``lse = -inf`` and ``out = 0``."""
    return (
        torch.full(tuple(batch_shape), float("-inf"), dtype=dtype, device=device),
        torch.zeros(*batch_shape, d, dtype=dtype, device=device),
    )


def merge_partials(
    a: tuple[torch.Tensor, torch.Tensor], b: tuple[torch.Tensor, torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge two partial results ``(lse (...), out (..., d))`` over disjoint key sets.

    Weights are computed relative to the larger of the two LSEs, so scores up to ~1e4 cannot
    overflow; when both sides are empty the result is empty (no NaN from ``-inf - -inf``).
    """
    (lse_a, out_a), (lse_b, out_b) = a, b
    if lse_a.shape != lse_b.shape or out_a.shape != out_b.shape or out_a.shape[:-1] != lse_a.shape:
        raise ValueError(
            f"partials must have matching shapes (lse (...), out (..., d)); got "
            f"{tuple(lse_a.shape)}, {tuple(out_a.shape)} and {tuple(lse_b.shape)}, {tuple(out_b.shape)}"
        )
    top = torch.maximum(lse_a, lse_b)  # (...)
    safe_top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))  # both empty: avoid -inf - -inf
    w_a = torch.exp(lse_a - safe_top)  # (...), in [0, 1]
    w_b = torch.exp(lse_b - safe_top)
    total = w_a + w_b
    lse = torch.where(total > 0, safe_top + torch.log(total), torch.full_like(top, float("-inf")))
    denom = torch.where(total > 0, total, torch.ones_like(total))
    out = (w_a / denom)[..., None] * out_a + (w_b / denom)[..., None] * out_b  # (..., d)
    return lse, out


def partial_attention(scores: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The partial result of a block: ``scores (..., n_q, n_k)`` (``-inf`` where masked), ``v (..., n_k, d)``."""
    lse = torch.logsumexp(scores, dim=-1)  # (..., n_q); -inf for a row with no visible key
    safe = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))
    p = torch.exp(scores - safe[..., None])  # (..., n_q, n_k); exactly 0 where masked
    return lse, p @ v  # (..., n_q), (..., n_q, d)
