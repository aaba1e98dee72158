"""The lm_modules assignment: the lecture's RNN written as ``torch.nn`` modules, and sampling from a
language model.

Conventions (the notebook states the same ones):

- Examples are rows: one step's input ``x (B, D)``, a state ``h (B, H)``, a sequence ``x_seq (B, T, D)``.
- A ``RecurrentCell`` holds two ``nn.Linear`` with bias, ``input_to_hidden`` (D -> H) and
  ``hidden_to_hidden`` (H -> H); one step is ``h = relu(input_to_hidden(x) + hidden_to_hidden(h_prev))``.
  The parameter names are part of the contract: the grader loads its own weights by those names.
- ``RNNLanguageModel``'s ``state_dict`` holds ``embedding.weight (V, E)``,
  ``layers.<l>.cell.{input_to_hidden,hidden_to_hidden}.{weight,bias}`` for each layer ``l`` and
  ``classification_head.{weight (V, H), bias (V,)}``. Every layer starts from ``h = 0``; the states of one
  layer are the input sequence of the next.
- ``sample_next`` draws from ``softmax(logits / temperature)`` with the caller's ``torch.Generator``;
  temperature 0 means the argmax (ties go to the lowest index, as ``torch.argmax``).

The functional forms (``recurrent_cell_step``, ``rnn_layer_states``, ``language_model_logits``) compute the
same things from explicit weight tensors, so expected values can be computed for any weights.

numpy/torch only; never imports :mod:`grader`.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping

import torch
from torch import nn

__all__ = [
    "RecurrentCell",
    "RNNLayer",
    "RNNLanguageModel",
    "sample_next",
    "generate",
    "recurrent_cell_step",
    "rnn_layer_states",
    "language_model_logits",
    "parameter_shapes",
    "TEMPERATURE_EFFECT",
    "WHY_SAMPLE",
]


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1; got {value!r}")
    return value


def _check_step(x: torch.Tensor, h_prev: torch.Tensor, D: int, H: int) -> None:
    if x.ndim != 2 or x.shape[1] != D:
        raise ValueError(f"x must have shape (B, input_dim) = (B, {D}); got {tuple(x.shape)}")
    if h_prev.shape != (x.shape[0], H):
        raise ValueError(f"h_prev must have shape (B, hidden_dim) = {(x.shape[0], H)}; got {tuple(h_prev.shape)}")


def _check_sequence(x_seq: torch.Tensor, h: torch.Tensor, D: int, H: int) -> None:
    if x_seq.ndim != 3 or x_seq.shape[2] != D or x_seq.shape[1] < 1:
        raise ValueError(f"x_seq must have shape (B, T, input_dim) = (B, T, {D}) with T >= 1; got {tuple(x_seq.shape)}")
    if h.shape != (x_seq.shape[0], H):
        raise ValueError(f"h must have shape (B, hidden_dim) = {(x_seq.shape[0], H)}; got {tuple(h.shape)}")


def _check_tokens(tokens: torch.Tensor, vocab_size: int) -> None:
    if not isinstance(tokens, torch.Tensor) or tokens.ndim != 2 or tokens.dtype != torch.int64 or tokens.shape[1] < 1:
        raise ValueError(
            f"tokens must be a (B, T) torch.long tensor with T >= 1; got "
            f"{tuple(getattr(tokens, 'shape', ()))}, {getattr(tokens, 'dtype', type(tokens).__name__)}"
        )
    if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= vocab_size):
        raise ValueError(
            f"token ids must lie in [0, {vocab_size}); got ids from {int(tokens.min())} to {int(tokens.max())}"
        )


# --- 1. the recurrent cell -------------------------------------------------------------------------------


class RecurrentCell(nn.Module):
    """One step of a ReLU RNN: ``h = relu(input_to_hidden(x) + hidden_to_hidden(h_prev))``."""

    def __init__(self, input_dim: int, hidden_dim: int):
        super().__init__()
        self.input_to_hidden = nn.Linear(_positive_int("input_dim", input_dim), _positive_int("hidden_dim", hidden_dim))
        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)

    def forward(self, x: torch.Tensor, h_prev: torch.Tensor) -> torch.Tensor:
        _check_step(x, h_prev, self.input_to_hidden.in_features, self.hidden_to_hidden.out_features)
        return torch.relu(self.input_to_hidden(x) + self.hidden_to_hidden(h_prev))  # (B, H)


def recurrent_cell_step(x, h_prev, W_ih, b_ih, W_hh, b_hh) -> torch.Tensor:
    """``RecurrentCell.forward`` from explicit weights: ``relu(x W_ih^T + b_ih + h_prev W_hh^T + b_hh)``.

    ``x (B, D)``, ``h_prev (B, H)``, ``W_ih (H, D)``, ``b_ih (H,)``, ``W_hh (H, H)``, ``b_hh (H,)`` (nn.Linear's
    layout); returns ``(B, H)``."""
    H, D = W_ih.shape
    if W_hh.shape != (H, H) or b_ih.shape != (H,) or b_hh.shape != (H,):
        raise ValueError(
            f"need W_ih (H, D), b_ih (H,), W_hh (H, H), b_hh (H,) with H={H}; got {tuple(W_ih.shape)}, "
            f"{tuple(b_ih.shape)}, {tuple(W_hh.shape)}, {tuple(b_hh.shape)}"
        )
    _check_step(x, h_prev, D, H)
    return torch.relu(x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)  # (B, H)


# --- 2. a layer: the cell looped over time ---------------------------------------------------------------


class RNNLayer(nn.Module):
    """A RecurrentCell applied at every step of a sequence; ``forward`` returns every state ``(B, T, H)``."""

    def __init__(self, input_dim: int, hidden_dim: int):
        super().__init__()
        self.cell = RecurrentCell(input_dim, hidden_dim)

    def forward(self, x_seq: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        _check_sequence(x_seq, h, self.cell.input_to_hidden.in_features, self.cell.hidden_to_hidden.out_features)
        states = []
        for t in range(x_seq.shape[1]):
            h = self.cell(x_seq[:, t, :], h)  # (B, H): reads step t and the state after step t - 1
            states.append(h)
        return torch.stack(states, dim=1)  # (B, T, H)


def rnn_layer_states(x_seq, h, W_ih, b_ih, W_hh, b_hh) -> torch.Tensor:
    """``RNNLayer.forward`` from explicit weights: every state ``(B, T, H)`` from ``x_seq (B, T, D)`` and
    ``h (B, H)``."""
    _check_sequence(x_seq, h, W_ih.shape[1], W_ih.shape[0])
    inputs = x_seq @ W_ih.T + b_ih  # (B, T, H): the input terms of every step at once
    states = []
    for t in range(x_seq.shape[1]):
        h = torch.relu(inputs[:, t] + h @ W_hh.T + b_hh)  # (B, H)
        states.append(h)
    return torch.stack(states, dim=1)  # (B, T, H)


# --- 3. the language model -------------------------------------------------------------------------------


class RNNLanguageModel(nn.Module):
    """Embedding, ``num_layers`` stacked RNNLayers (each from ``h = 0``) and a linear head: ``(B, T)`` ids ->
    ``(B, T, V)`` logits."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden_dim: int, num_layers: int):
        super().__init__()
        self.hidden_dim = _positive_int("hidden_dim", hidden_dim)
        self.embedding = nn.Embedding(_positive_int("vocab_size", vocab_size), _positive_int("embed_dim", embed_dim))
        self.layers = nn.ModuleList(
            [
                RNNLayer(embed_dim if l == 0 else hidden_dim, hidden_dim)
                for l in range(_positive_int("num_layers", num_layers))
            ]
        )
        self.classification_head = nn.Linear(hidden_dim, vocab_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        _check_tokens(tokens, self.embedding.num_embeddings)
        x = self.embedding(tokens)  # (B, T, E)
        for layer in self.layers:
            h = x.new_zeros(x.shape[0], self.hidden_dim)  # (B, H): every layer starts from 0
            x = layer(x, h)  # (B, T, H): this layer's states are the next layer's inputs
        return self.classification_head(x)  # (B, T, V)


def parameter_shapes(vocab_size: int, embed_dim: int, hidden_dim: int, num_layers: int) -> dict[str, tuple]:
    """``{name: shape}`` of ``RNNLanguageModel(vocab_size, embed_dim, hidden_dim, num_layers).state_dict()``."""
    V, E, H = vocab_size, embed_dim, hidden_dim
    shapes = {"embedding.weight": (V, E)}
    for l in range(num_layers):
        cell = f"layers.{l}.cell."
        shapes |= {
            cell + "input_to_hidden.weight": (H, E if l == 0 else H),
            cell + "input_to_hidden.bias": (H,),
            cell + "hidden_to_hidden.weight": (H, H),
            cell + "hidden_to_hidden.bias": (H,),
        }
    return shapes | {"classification_head.weight": (V, H), "classification_head.bias": (V,)}


def language_model_logits(tokens: torch.Tensor, params: Mapping[str, torch.Tensor], num_layers: int) -> torch.Tensor:
    """``RNNLanguageModel.forward`` from a state_dict-like mapping (the names ``parameter_shapes`` gives):
    ``(B, T, V)``."""
    _positive_int("num_layers", num_layers)
    needed = ["embedding.weight", "classification_head.weight", "classification_head.bias"]
    needed += [
        f"layers.{l}.cell.{lin}.{p}"
        for l in range(num_layers)
        for lin in ("input_to_hidden", "hidden_to_hidden")
        for p in ("weight", "bias")
    ]
    missing = [name for name in needed if name not in params]
    if missing:
        raise ValueError(f"params lacks {missing[:3]}{' ...' if len(missing) > 3 else ''} for num_layers={num_layers}")
    E = params["embedding.weight"]  # (V, E)
    _check_tokens(tokens, E.shape[0])
    x = E[tokens]  # (B, T, E)
    for l in range(num_layers):
        cell = f"layers.{l}.cell."
        W_ih, b_ih = params[cell + "input_to_hidden.weight"], params[cell + "input_to_hidden.bias"]  # (H, in), (H,)
        W_hh, b_hh = params[cell + "hidden_to_hidden.weight"], params[cell + "hidden_to_hidden.bias"]  # (H, H), (H,)
        h = x.new_zeros(x.shape[0], W_hh.shape[0])  # (B, H)
        x = rnn_layer_states(x, h, W_ih, b_ih, W_hh, b_hh)  # (B, T, H)
    return x @ params["classification_head.weight"].T + params["classification_head.bias"]  # (B, T, V)


# --- 4. sampling -----------------------------------------------------------------------------------------


def _check_temperature(temperature) -> float:
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, (int, float))
        or not math.isfinite(temperature)
        or temperature < 0
    ):
        raise ValueError(f"temperature must be a finite number >= 0; got {temperature!r}")
    return float(temperature)


def sample_next(logits: torch.Tensor, temperature: float, generator: torch.Generator) -> torch.Tensor:
    """One token id per row, ``(B,)`` long, drawn from ``softmax(logits / temperature)`` with ``generator``.

    ``logits (B, V)``; temperature 0 is the argmax (the lowest index among ties) and draws nothing."""
    temperature = _check_temperature(temperature)
    if (
        not isinstance(logits, torch.Tensor)
        or logits.ndim != 2
        or not logits.is_floating_point()
        or logits.shape[1] < 1
    ):
        raise ValueError(
            f"logits must be a floating (B, V) tensor with V >= 1; got "
            f"{tuple(getattr(logits, 'shape', ()))}, {getattr(logits, 'dtype', type(logits).__name__)}"
        )
    if torch.isnan(logits).any() or (logits == math.inf).any():
        raise ValueError("logits must not hold NaN or +inf")
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    if temperature == 0:
        return logits.argmax(dim=-1)  # (B,)
    probs = torch.softmax(logits / temperature, dim=-1)  # (B, V): each row sums to 1
    return torch.multinomial(probs, 1, generator=generator)[:, 0]  # (B,)


def generate(
    model: Callable[[torch.Tensor], torch.Tensor],
    prefix: torch.Tensor,
    n_new: int,
    temperature: float,
    generator: torch.Generator,
) -> torch.Tensor:
    """``prefix (B, T0)`` followed by ``n_new`` tokens, each drawn by ``sample_next`` from the model's logits at
    the last position given every token before it: ``(B, T0 + n_new)`` long."""
    if not isinstance(prefix, torch.Tensor) or prefix.ndim != 2 or prefix.dtype != torch.int64 or prefix.shape[1] < 1:
        raise ValueError(
            f"prefix must be a (B, T0) torch.long tensor with T0 >= 1; got "
            f"{tuple(getattr(prefix, 'shape', ()))}, {getattr(prefix, 'dtype', type(prefix).__name__)}"
        )
    if isinstance(n_new, bool) or not isinstance(n_new, int) or n_new < 0:
        raise ValueError(f"n_new must be an int >= 0; got {n_new!r}")
    _check_temperature(temperature)
    tokens = prefix
    with torch.no_grad():
        for _ in range(n_new):
            logits = model(tokens)  # (B, T, V): one prediction per position
            nxt = sample_next(logits[:, -1, :], temperature, generator)  # (B,): given all T tokens so far
            tokens = torch.cat([tokens, nxt[:, None].to(tokens.device)], dim=1)  # (B, T + 1)
    return tokens


# --- 5. answers ------------------------------------------------------------------------------------------

# Dividing the logits by T keeps their order: T < 1 sharpens softmax toward the argmax, T > 1 flattens it
# toward uniform, T = 1 is the model's own distribution (choice "B"; tests/reference checks it numerically).
TEMPERATURE_EFFECT = "B"
# Greedy decoding is deterministic and tends to repeat the most frequent continuations; sampling gives
# varied text distributed as the model says (choice "D").
WHY_SAMPLE = "D"
