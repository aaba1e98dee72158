"""Attention, multi-head attention, normalisations and the pre-norm transformer block (the ``attention`` assignment).

Conventions (the notebook states the same ones):

- Row vectors: a sequence is ``X (N, D)`` or a batch ``(B, N, D)``; projections are ``X @ W``.
- A ``mask`` is a bool tensor broadcastable to ``(..., Nq, Nk)``; ``True`` means "query i may attend to
  key j" (``torch.nn.functional.scaled_dot_product_attention``'s convention; ``torch.nn.MultiheadAttention``
  uses the opposite one).
- A query row that may attend to no key gets all-zero weights and an all-zero output (no NaN).
- Multi-head projections are ``(D, H*Dh)``; head ``h`` uses columns ``h*Dh:(h+1)*Dh``, and the heads'
  outputs are concatenated in order before ``Wo (H*Dh, D)``.
"""

from __future__ import annotations

import math

import torch

from .attention import _positive_int

__all__ = [
    "scaled_dot_product_attention",
    "self_attention",
    "sinusoidal_positions",
    "multi_head_attention",
    "layer_norm",
    "rms_norm",
    "swiglu",
    "transformer_block",
    "attention_weights_bytes",
    "block_param_count",
    "BLOCK_PARAM_NAMES",
    "causal_bool_mask",
    "is_permutation_equivariant",
    "swap_poll_output",
    "SELF_ATTENTION_WITH_POSITIONS_IS_EQUIVARIANT",
    "SWAP_POLL_OUTPUT",
]


# --- 1. scaled dot-product attention ---------------------------------------------------------------------


def scaled_dot_product_attention(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(Y, A)`` with ``A = softmax(Q K^T / sqrt(dk))`` over the keys (masked keys get weight 0) and ``Y = A V``.

    ``Q (..., Nq, dk)``, ``K (..., Nk, dk)``, ``V (..., Nk, dv)``; ``mask`` bool, broadcastable to
    ``(..., Nq, Nk)``, True where the query may attend to the key. A query that may attend to no key
    gets a zero row of weights and a zero output row.
    """
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last size dk; got {tuple(Q.shape)} and {tuple(K.shape)}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have the same number of keys Nk; got {tuple(K.shape)} and {tuple(V.shape)}")
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])  # (..., Nq, Nk)
    if mask is None:
        A = torch.softmax(scores, dim=-1)  # (..., Nq, Nk)
    else:
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be a bool tensor (True = may attend); got dtype {mask.dtype}")
        some = mask.any(dim=-1, keepdim=True)  # (..., Nq, 1): the query may attend to at least one key
        # -inf at masked keys; a row with no allowed key is set to 0 first so that its softmax stays finite.
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~some, 0.0)  # (..., Nq, Nk)
        A = torch.softmax(scores, dim=-1) * some  # (..., Nq, Nk); zero rows where nothing is allowed
    return A @ V, A  # (..., Nq, dv), (..., Nq, Nk)


# --- 2. self-attention and 3. positions ------------------------------------------------------------------


def self_attention(X: torch.Tensor, Wq: torch.Tensor, Wk: torch.Tensor, Wv: torch.Tensor) -> torch.Tensor:
    """Unmasked single-head self-attention ``softmax(X Wq (X Wk)^T / sqrt(dk)) X Wv``.

    ``X (N, D)`` or ``(B, N, D)``, ``Wq, Wk (D, dk)``, ``Wv (D, dv)``; returns ``(N, dv)`` or ``(B, N, dv)``.
    """
    if X.ndim not in (2, 3):
        raise ValueError(f"X must have shape (N, D) or (B, N, D); got {tuple(X.shape)}")
    return scaled_dot_product_attention(X @ Wq, X @ Wk, X @ Wv)[0]  # (..., N, dv)


def sinusoidal_positions(T: int, d: int) -> torch.Tensor:
    """``P (T, d)`` in the default dtype: ``P[t, 2i] = sin(t / 10000^(2i/d))``, ``P[t, 2i+1] = cos(...)``; d even."""
    T, d = _positive_int("T", T), _positive_int("d", d)
    if d % 2:
        raise ValueError(f"d must be even; got d={d}")
    t = torch.arange(T, dtype=torch.float64)[:, None]  # (T, 1)
    rate = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,): 1 / 10000^(2i/d)
    P = torch.empty(T, d, dtype=torch.float64)
    P[:, 0::2] = torch.sin(t * rate)  # (T, d/2)
    P[:, 1::2] = torch.cos(t * rate)  # (T, d/2)
    return P.to(torch.get_default_dtype())


def is_permutation_equivariant(f, X: torch.Tensor, perm: torch.Tensor) -> bool:
    """Whether ``f(X[perm]) == f(X)[perm]`` (positions on axis -2) for this input and permutation."""
    return bool(torch.allclose(f(X[..., perm, :]), f(X)[..., perm, :], rtol=1e-9, atol=1e-12))


def _answer_with_positions() -> bool:
    gen = torch.Generator().manual_seed(0)
    N, D = 5, 4
    X, Wq, Wk, Wv = (
        torch.randn(*shape, generator=gen, dtype=torch.float64) for shape in ((N, D), (D, D), (D, D), (D, D))
    )
    P = sinusoidal_positions(N, D).to(torch.float64)
    return is_permutation_equivariant(lambda Z: self_attention(Z + P, Wq, Wk, Wv), X, torch.tensor([2, 0, 4, 1, 3]))


# Is X -> self_attention(X + P) still permutation equivariant? Computed, not typed in.
SELF_ATTENTION_WITH_POSITIONS_IS_EQUIVARIANT = _answer_with_positions()


# --- 4. multi-head attention -----------------------------------------------------------------------------


def multi_head_attention(
    X: torch.Tensor,
    Wq: torch.Tensor,
    Wk: torch.Tensor,
    Wv: torch.Tensor,
    Wo: torch.Tensor,
    n_heads: int,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Multi-head self-attention without biases; ``Y`` is shaped like ``X``.

    ``X (N, D)`` or ``(B, N, D)``; ``Wq, Wk, Wv (D, H*Dh)``; ``Wo (H*Dh, D)``; head ``h`` uses columns
    ``h*Dh:(h+1)*Dh``; ``mask`` as in :func:`scaled_dot_product_attention`, shared by every head.
    """
    n_heads = _positive_int("n_heads", n_heads)
    if X.ndim not in (2, 3):
        raise ValueError(f"X must have shape (N, D) or (B, N, D); got {tuple(X.shape)}")
    D = X.shape[-1]
    if D % n_heads:
        raise ValueError(f"n_heads must divide D; got D={D}, n_heads={n_heads}")
    width = Wq.shape[-1]
    if width % n_heads:
        raise ValueError(f"n_heads must divide the projection width H*Dh; got {width}, n_heads={n_heads}")
    Xb = X if X.ndim == 3 else X[None]  # (B, N, D)
    B, N, _ = Xb.shape
    Dh = width // n_heads

    def heads(W):
        return (Xb @ W).view(B, N, n_heads, Dh).transpose(1, 2)  # (B, N, H*Dh) -> (B, H, N, Dh)

    Y, _ = scaled_dot_product_attention(heads(Wq), heads(Wk), heads(Wv), mask)  # (B, H, N, Dh)
    Y = Y.transpose(1, 2).reshape(B, N, n_heads * Dh) @ Wo  # (B, N, H*Dh) -> (B, N, D)
    return Y if X.ndim == 3 else Y[0]  # shaped like X


# --- 6. normalisations and the gated MLP -----------------------------------------------------------------


def layer_norm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Normalise over the last axis with the biased (population) variance, then scale and shift; any leading shape."""
    mean = x.mean(dim=-1, keepdim=True)  # (..., 1)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # (..., 1), divides by D, not D - 1
    return (x - mean) / torch.sqrt(var + eps) * gamma + beta  # (..., D)


def rms_norm(x: torch.Tensor, gamma: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """``x / sqrt(mean(x^2) + eps) * gamma`` over the last axis; any leading shape."""
    return x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + eps) * gamma  # (..., D)


def swiglu(x: torch.Tensor, W1: torch.Tensor, W2: torch.Tensor, W3: torch.Tensor) -> torch.Tensor:
    """``(silu(x W1) * (x W2)) W3``; ``x (..., D)``, ``W1, W2 (D, F)``, ``W3 (F, D_out)``."""
    return (torch.nn.functional.silu(x @ W1) * (x @ W2)) @ W3  # (..., F) -> (..., D_out)


# --- 7. the pre-norm transformer block -------------------------------------------------------------------

# The params dict of transformer_block: D = model width.
BLOCK_PARAM_NAMES = {
    "ln1_gamma": "(D,)",
    "ln1_beta": "(D,)",
    "Wq": "(D, D)",
    "Wk": "(D, D)",
    "Wv": "(D, D)",
    "Wo": "(D, D)",
    "ln2_gamma": "(D,)",
    "ln2_beta": "(D,)",
    "W1": "(D, 4D)",
    "b1": "(4D,)",
    "W2": "(4D, D)",
    "b2": "(D,)",
}


def causal_bool_mask(N: int) -> torch.Tensor:
    """``(N, N)`` bool, True where key ``j <= i`` (query ``i`` may attend to it)."""
    return torch.ones(N, N, dtype=torch.bool).tril()  # (N, N)


def transformer_block(x: torch.Tensor, params: dict, n_heads: int, causal: bool) -> torch.Tensor:
    """Pre-norm block: ``h = x + MHA(LN1(x))``, ``y = h + MLP(LN2(h))`` with ``MLP(z) = relu(z W1 + b1) W2 + b2``.

    ``x (N, D)`` or ``(B, N, D)``; ``params`` as in :data:`BLOCK_PARAM_NAMES`; with ``causal`` each
    position attends only to itself and earlier ones.
    """
    p = params
    mask = causal_bool_mask(x.shape[-2]) if causal else None
    h = x + multi_head_attention(
        layer_norm(x, p["ln1_gamma"], p["ln1_beta"]), p["Wq"], p["Wk"], p["Wv"], p["Wo"], n_heads, mask
    )  # (..., N, D)
    z = layer_norm(h, p["ln2_gamma"], p["ln2_beta"])  # (..., N, D)
    return h + torch.relu(z @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]  # (..., N, 4D) -> (..., N, D)


# --- 8. counting -----------------------------------------------------------------------------------------


def attention_weights_bytes(N: int, H: int, bytes_per_element: int) -> int:
    """Bytes of one sequence's attention weights: ``H`` matrices of ``N x N`` entries."""
    N, H, size = _positive_int("N", N), _positive_int("H", H), _positive_int("bytes_per_element", bytes_per_element)
    return H * N * N * size


def block_param_count(D: int, bias: bool = True) -> int:
    """Parameters of ``torch.nn.TransformerEncoderLayer(D, nhead, dim_feedforward=4*D, bias=bias)``.

    Attention ``4 D^2`` (+ ``4 D`` biases), MLP ``8 D^2`` (+ ``4 D + D`` biases), two LayerNorms ``2 D``
    (+ ``2 D`` shifts): ``12 D^2 + 13 D`` with biases, ``12 D^2 + 2 D`` without.
    """
    D = _positive_int("D", D)
    return 12 * D * D + (13 * D if bias else 2 * D)


# --- 5. the lecture's swap poll --------------------------------------------------------------------------

POLL_INPUTS = ((1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 2.0, 0.0), (0.0, 0.0, 0.0, 1.0))
POLL_WEIGHTS = (0.1, 0.2, 0.6, 0.1)  # of x4's query over x1..x4, before the swap


def swap_poll_output() -> torch.Tensor:
    """x4's output after x2 and x3 swap places, with Wv = I and the poll's weights, computed by attention.

    The weights come from the keys' contents: scores ``log a_j`` are realised by a key projection
    (each x_j is a multiple of a basis vector), so swapping two inputs moves their scores with them.
    """
    X = torch.tensor(POLL_INPUTS, dtype=torch.float64)  # (4, 4)
    a = torch.tensor(POLL_WEIGHTS, dtype=torch.float64)  # (4,)
    Wk = torch.diag(torch.log(a) / X.diagonal())  # x_j @ Wk = log(a_j) e_j
    q = torch.full((1, 4), math.sqrt(4.0), dtype=torch.float64)  # q . k_j / sqrt(4) = log(a_j)
    swapped = X[[0, 2, 1, 3]]  # x1, x3, x2, x4
    Y, _ = scaled_dot_product_attention(q, swapped @ Wk, swapped @ torch.eye(4, dtype=torch.float64))  # (1, 4)
    return Y[0]  # (4,)


SWAP_POLL_OUTPUT = swap_poll_output()
