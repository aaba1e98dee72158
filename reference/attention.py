"""Causal masking, single-head masked self-attention and attention parameter counts."""

from __future__ import annotations

import math
import numbers

import torch

from .flash import flash_attention

__all__ = ["causal_mask", "masked_self_attention", "qkv_param_count", "mha_param_count"]


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int; got {value!r} of type {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1; got {name}={value}")
    return int(value)


def causal_mask(T: int) -> torch.Tensor:
    """Additive causal mask of shape ``(T, T)``: ``0`` where key ``j <= i`` (query), ``-inf`` where ``j > i``.

    Added to attention scores before the softmax, it stops each position from looking at later ones.
    """
    T = _positive_int("T", T)
    future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # (T, T), True strictly above the diagonal
    return torch.zeros(T, T).masked_fill(future, float("-inf"))  # (T, T)


def masked_self_attention(X: torch.Tensor, Wq: torch.Tensor, Wk: torch.Tensor, Wv: torch.Tensor) -> torch.Tensor:
    """Causal single-head self-attention: ``softmax(Q K^T / sqrt(d_k) + causal_mask(T)) V``, via the fused kernel.

    ``X (T, d)`` or ``(B, T, d)``, ``Wq, Wk (d, d_k)``, ``Wv (d, d_v)``; returns ``(T, d_v)`` or ``(B, T, d_v)``.
    """
    if X.ndim not in (2, 3):
        raise ValueError(f"X must have shape (T, d) or (B, T, d); got {tuple(X.shape)}")
    d = X.shape[-1]
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        if W.ndim != 2 or W.shape[0] != d:
            raise ValueError(f"{name} must have shape (d, _) with d = {d}; got {tuple(W.shape)}")
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError(f"Wq and Wk must have the same shape (d, d_k); got {tuple(Wq.shape)} and {tuple(Wk.shape)}")
    d_k = Wq.shape[1]
    batched = X.ndim == 3
    Xb = X if batched else X[None]  # (B, T, d)
    q, k, v = (Xb @ W for W in (Wq, Wk, Wv))  # (B, T, d_k), (B, T, d_k), (B, T, d_v)
    # One head: (B, 1, T, d). The fused kernel (Triton on CUDA, tiled elsewhere) applies the causal mask.
    y = flash_attention(q[:, None], k[:, None], v[:, None], causal=True, scale=1.0 / math.sqrt(d_k))[
        :, 0
    ]  # (B, T, d_v)
    return y if batched else y[0]  # (B, T, d_v) or (T, d_v)


def qkv_param_count(d_model: int, seq_len: int) -> int:
    """Trainable parameters of ``W_q, W_k, W_v`` (each ``d_model x d_model``, no bias) in one attention head.

    The count does not depend on ``seq_len``: the same projections are applied at every position.
    """
    d_model = _positive_int("d_model", d_model)
    _positive_int("seq_len", seq_len)
    return 3 * d_model * d_model


def mha_param_count(d_model: int, n_heads: int, bias: bool = True) -> int:
    """Parameters of a multi-head attention layer as ``torch.nn.MultiheadAttention(d_model, n_heads, bias=bias)``.

    The heads split ``d_model`` between them, so the Q, K, V and output projections are each
    ``d_model x d_model`` whatever ``n_heads`` is, plus a bias of ``d_model`` each when ``bias`` is true.
    """
    d_model = _positive_int("d_model", d_model)
    n_heads = _positive_int("n_heads", n_heads)
    if d_model % n_heads:
        raise ValueError(f"n_heads must divide d_model; got d_model={d_model}, n_heads={n_heads}")
    return 4 * d_model * d_model + (4 * d_model if bias else 0)
