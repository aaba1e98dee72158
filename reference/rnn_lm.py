"""The rnn_lm assignment: an LSTM cell, a recurrent language model, n-gram counts, encoder-decoder
attention and causal (dilated) convolutions.

Conventions (the notebook states them to students):
- examples are rows: ``x (B, D)``, ``h, c (B, H)``; the LSTM's ``W (4H, H + D)`` acts on ``[h; x]``
  and its gate blocks are ordered ``(i, f, o, g)``;
- the language model's weights act from the right: ``h_t = tanh(E[x_t] W_xh + h_{t-1} W_hh + b_h)``
  with ``h_{-1} = 0``, ``logits_t = h_t W_hy + b_y``; the loss is the *summed* natural-log
  cross-entropy of token ``t + 1`` given ``logits_t``;
- ``ngram_probs`` maps each ``(n - 1)``-word context (a tuple) to ``{next word: probability}``;
- ``sequence_log_prob`` scores every token after the first under a bigram table (natural log),
  ``-inf`` as soon as a context or a bigram was never seen;
- ``causal_conv1d``: ``y[t] = sum_k w[k] x[t - k * dilation]`` with zeros before the start.

numpy/torch/plain Python only; never imports :mod:`grader`.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

__all__ = [
    "lstm_cell",
    "lstm_cell_torch",
    "lstm_weights_to_torch",
    "rnn_lm_states",
    "rnn_lm_loss",
    "rnn_lm_loss_torch",
    "ngram_probs",
    "sequence_log_prob",
    "encoder_decoder_context",
    "causal_conv1d",
    "receptive_field",
    "lstm_param_count",
    "TEACHER_FORCING_PARALLEL",
    "LSTM_PARAM_COUNT",
    "LSTM_PARAM_SIZES",
]

# --- LSTM cell -----------------------------------------------------------------------------------------


def lstm_cell(x: torch.Tensor, h: torch.Tensor, c: torch.Tensor, W: torch.Tensor, b: torch.Tensor):
    """One LSTM step; gates ``(i, f, o, g)`` from ``[h; x] W^T + b``. Returns ``(h_next, c_next)``, each ``(B, H)``."""
    H = h.shape[-1]
    if W.shape != (4 * H, H + x.shape[-1]) or b.shape != (4 * H,):
        raise ValueError(
            f"W must be (4H, H + D) = {(4 * H, H + x.shape[-1])} and b (4H,); got {tuple(W.shape)}, {tuple(b.shape)}"
        )
    z = torch.cat([h, x], dim=-1) @ W.T + b  # (B, 4H)
    i, f, o, g = z.split(H, dim=-1)  # (B, H) each
    c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)  # (B, H)
    h_next = torch.sigmoid(o) * torch.tanh(c_next)  # (B, H)
    return h_next, c_next


def lstm_weights_to_torch(W: torch.Tensor, b: torch.Tensor, H: int):
    """``(weight_ih, weight_hh, bias_ih, bias_hh)`` of ``torch.nn.LSTMCell`` for our ``W``, ``b``.

    Ours: one matrix on ``[h; x]``, gate blocks ``(i, f, o, g)``. Torch: input and hidden weights apart,
    gate blocks ``(i, f, g, o)``, two biases (the second one zero here)."""
    order = torch.cat([torch.arange(k * H, (k + 1) * H) for k in (0, 1, 3, 2)])  # (4H,): i, f, g, o
    W, b = W[order], b[order]  # (4H, H + D), (4H,)
    return W[:, H:], W[:, :H], b, torch.zeros_like(b)  # (4H, D), (4H, H), (4H,), (4H,)


def lstm_cell_torch(x, h, c, W, b):
    """``lstm_cell`` computed by ``torch.nn.LSTMCell`` with the weights mapped to torch's layout."""
    B, D = x.shape
    H = h.shape[-1]
    cell = torch.nn.LSTMCell(D, H, dtype=x.dtype)
    with torch.no_grad():
        for param, value in zip(
            (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), lstm_weights_to_torch(W, b, H)
        ):
            param.copy_(value)
        h_next, c_next = cell(x, (h, c))
    return h_next, c_next


# --- recurrent language model --------------------------------------------------------------------------


def rnn_lm_states(
    tokens: torch.Tensor, E: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor, b_h: torch.Tensor
) -> torch.Tensor:
    """Hidden states ``h_0 .. h_{T-1}``, shape ``(T, H)``: ``h_t = tanh(E[x_t] W_xh + h_{t-1} W_hh + b_h)``,
    ``h_{-1} = 0``."""
    tokens = torch.as_tensor(tokens)
    if tokens.ndim != 1 or tokens.dtype not in (torch.int64, torch.int32):
        raise ValueError(f"tokens must be a 1-D integer tensor; got {tuple(tokens.shape)}, {tokens.dtype}")
    X = E[tokens] @ W_xh  # (T, H): every input term at once
    h = torch.zeros(W_hh.shape[0], dtype=E.dtype)  # (H,)
    states = []
    for t in range(len(tokens)):
        h = torch.tanh(X[t] + h @ W_hh + b_h)  # (H,)
        states.append(h)
    return torch.stack(states)  # (T, H)


def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y) -> torch.Tensor:
    """Summed cross-entropy (natural log) of token ``t + 1`` given ``logits_t = h_t W_hy + b_y``; a 0-dim tensor."""
    tokens = torch.as_tensor(tokens)
    if tokens.ndim != 1 or len(tokens) < 2:
        raise ValueError(f"tokens must be 1-D with at least 2 entries; got shape {tuple(tokens.shape)}")
    logits = rnn_lm_states(tokens, E, W_xh, W_hh, b_h)[:-1] @ W_hy + b_y  # (T-1, V): predicts tokens[1:]
    logp = torch.log_softmax(logits, dim=-1)  # (T-1, V)
    return -logp.gather(1, tokens[1:, None]).sum()  # ()


def rnn_lm_loss_torch(tokens, E, W_xh, W_hh, b_h, W_hy, b_y) -> torch.Tensor:
    """``rnn_lm_loss`` computed by ``torch.nn.RNN(nonlinearity='tanh')`` and ``F.cross_entropy(reduction='sum')``."""
    D, H = W_xh.shape
    rnn = torch.nn.RNN(D, H, nonlinearity="tanh", batch_first=True, dtype=E.dtype)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(W_xh.T)
        rnn.weight_hh_l0.copy_(W_hh.T)
        rnn.bias_ih_l0.copy_(b_h)
        rnn.bias_hh_l0.zero_()
        states, _ = rnn(E[tokens][None])  # (1, T, H)
    logits = states[0, :-1] @ W_hy + b_y  # (T-1, V)
    return F.cross_entropy(logits, tokens[1:], reduction="sum")


# --- n-grams -------------------------------------------------------------------------------------------


def ngram_probs(tokens, n: int) -> dict:
    """Maximum-likelihood ``P(word | previous n - 1 words)``: ``{context tuple: {word: probability}}``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an int >= 1; got {n!r}")
    tokens = list(tokens)
    table: dict[tuple, dict[str, int]] = {}
    for end in range(n - 1, len(tokens)):  # tokens[end] follows the context tokens[end-n+1:end]
        following = table.setdefault(tuple(tokens[end - n + 1 : end]), {})
        following[tokens[end]] = following.get(tokens[end], 0) + 1
    return {
        context: {word: count / sum(following.values()) for word, count in following.items()}
        for context, following in table.items()
    }


def sequence_log_prob(tokens, probs: dict) -> float:
    """``sum_{t >= 1} ln P(tokens[t] | tokens[t-1])`` under a bigram table; ``-inf`` for an unseen context or bigram.

    The first token is given, not scored, so a one-token sentence has log-probability 0."""
    total = 0.0
    for prev, word in zip(tokens[:-1], tokens[1:]):
        p = probs.get((prev,), {}).get(word, 0.0)
        if p <= 0:
            return float("-inf")
        total += math.log(p)
    return total


# --- encoder-decoder attention -------------------------------------------------------------------------


def encoder_decoder_context(S: torch.Tensor, H: torch.Tensor) -> torch.Tensor:
    """``softmax(S H^T) H``: one context vector per decoder state. ``S (T_dec, d)``, ``H (T_enc, d)`` ->
    ``(T_dec, d)``."""
    weights = torch.softmax(S @ H.T, dim=-1)  # (T_dec, T_enc): each row sums to 1
    return weights @ H  # (T_dec, d)


# --- causal convolutions -------------------------------------------------------------------------------


def causal_conv1d(x: torch.Tensor, w: torch.Tensor, dilation: int = 1) -> torch.Tensor:
    """``y[t] = sum_k w[k] x[t - k * dilation]`` (zeros before the start), for ``x (T,)`` and ``w (K,)``; ``(T,)``."""
    if x.ndim != 1 or w.ndim != 1 or dilation < 1:
        raise ValueError(f"need x (T,), w (K,) and dilation >= 1; got {tuple(x.shape)}, {tuple(w.shape)}, {dilation}")
    K = w.shape[0]
    padded = F.pad(x[None, None], ((K - 1) * dilation, 0))  # (1, 1, T + (K-1) d): zeros before the start
    # conv1d correlates (no flip): flipping w turns its correlation into our convolution.
    return F.conv1d(padded, w.flip(0)[None, None], dilation=dilation)[0, 0]  # (T,)


def receptive_field(kernel_size: int, dilations) -> int:
    """How many inputs one output of a stack of causal convolutions sees: ``1 + sum_l (K - 1) d_l``."""
    return 1 + sum((kernel_size - 1) * d for d in dilations)


# --- answers -------------------------------------------------------------------------------------------


def lstm_param_count(D: int, H: int) -> int:
    """Parameters of ``torch.nn.LSTM(D, H)``: four gates, each with input and hidden weights and two biases."""
    return 4 * (H * D + H * H + 2 * H)


# Teacher forcing feeds the true previous token, but an RNN's h_t still needs h_{t-1}: its steps stay
# sequential. A transformer's positions are computed at once under the causal mask (choice "B").
TEACHER_FORCING_PARALLEL = "B"
LSTM_PARAM_SIZES = (10, 20)  # (D, H) the notebook asks about
LSTM_PARAM_COUNT = lstm_param_count(*LSTM_PARAM_SIZES)
