"""Checks for the recurrent language model: rnn_lm_states (values, causality, gradients) and rnn_lm_loss.

``rnn_lm_loss`` is graded with the reference ``rnn_lm_states`` as a stand-in (grader/checking/standins.py), so
a mistake in the student's states never costs the loss; the loss's values are compared with
``torch.nn.RNN`` and ``F.cross_entropy(reduction='sum')``.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from grader.checking.base import CheckFailed
from grader.checking.compare import describe, kind_of
from grader.checking.gate import Probe
from grader.checking.positions import Causality, causality
from grader.checking.strategies import gaussian, st
from grader.checking.templates import Gradients, Values, check, form, gradients, values
from reference import rnn_lm

SMALL = {"T": 4, "V": 3, "D": 2, "H": 3, "seed": 0}


def lm_dims(*, min_len: int = 1):
    """Sizes of a language-model problem: length T, vocabulary V, embedding D, hidden H, and a seed."""
    return st.fixed_dictionaries(
        {
            "T": st.integers(min_len, 5),
            "V": st.integers(2, 4),
            "D": st.integers(1, 3),
            "H": st.integers(1, 3),
            "seed": st.integers(0, 2**16),
        }
    )


def lm_inputs(dims: dict) -> list[torch.Tensor]:
    """``[tokens (T,) int64, E (V, D), W_xh (D, H), W_hh (H, H), b_h (H,), W_hy (H, V), b_y (V,)]``."""
    T, V, D, H, seed = dims["T"], dims["V"], dims["D"], dims["H"], dims["seed"]
    tokens = torch.from_numpy(np.random.default_rng(seed).integers(0, V, T)).to(torch.int64)
    return [
        tokens,
        gaussian(seed + 1, V, D),
        gaussian(seed + 2, D, H),
        gaussian(seed + 3, H, H) / 2,
        gaussian(seed + 4, H),
        gaussian(seed + 5, H, V),
        gaussian(seed + 6, V),
    ]


def _tensor(value, shape, context, name="the result") -> torch.Tensor:
    if kind_of(value) != "tensor":
        raise CheckFailed(f"{context}: {name} should be a torch tensor; got {describe(value)}", kind="type")
    if tuple(value.shape) != tuple(shape):
        raise CheckFailed(f"{context}: {name} has shape {tuple(value.shape)}; expected {tuple(shape)}", kind="shape")
    if value.dtype != torch.float64:
        raise CheckFailed(
            f"{context}: {name} has dtype {value.dtype}; expected torch.float64 (the dtype of E)", kind="dtype"
        )
    return value.detach()


# --- rnn_lm_states -------------------------------------------------------------------------------------


def _next_tokens(tokens, args):
    """Every token replaced by the next word of the vocabulary (E has one row per word)."""
    return (tokens + 1) % args[1].shape[0]


PROBE_RNN_LM_STATES = Probe(
    "rnn_lm_states",
    lm_dims(),
    lambda dims: lm_inputs(dims)[:5],
    rnn_lm.rnn_lm_states,
    {0: "tokens", 1: "E", 2: "W_xh", 3: "W_hh", 4: "b_h"},
    move={0: _next_tokens},
)


def _state_mistakes(tokens, E, W_xh, W_hh, b_h):
    want = rnn_lm.rnn_lm_states(tokens, E, W_xh, W_hh, b_h)
    zero = torch.zeros_like(want[:1])

    def recur(step):
        h, out = torch.zeros(W_hh.shape[0], dtype=E.dtype), []
        for t in range(len(tokens)):
            h = step(E[tokens[t]], h)
            out.append(h)
        return torch.stack(out)

    return (
        (
            lambda: torch.cat([zero, want[:-1]]),
            "Return h_0 .. h_{T-1}, the states after each token, not the state "
            "before the first token (h_{-1} = 0) followed by h_0 .. h_{T-2}.",
        ),
        (
            lambda: recur(lambda e, h: torch.tanh(e @ W_xh + h @ W_hh.T + b_h)),
            "Row vectors: h_{t-1} is multiplied by W_hh from the right (h @ W_hh), not by its transpose.",
        ),
        (lambda: recur(lambda e, h: torch.tanh(e @ W_xh + h @ W_hh)), "The bias b_h is missing."),
        (lambda: recur(lambda e, h: e @ W_xh + h @ W_hh + b_h), "The tanh is missing."),
        (
            lambda: recur(lambda e, h: torch.tanh(e @ W_xh + b_h)),
            "The recurrent term h_{t-1} @ W_hh is missing: each state must carry the previous one forward.",
        ),
    )


def _state_inputs(dims):
    return lm_inputs(dims)[:5]


def _states_shape(args) -> tuple:
    return (args[0].shape[0], args[3].shape[0])  # (T, H)


STATES = Values(
    "rnn_lm_states",
    lm_dims,
    _state_inputs,
    rnn_lm.rnn_lm_states,
    max_examples=8,
    examples=(SMALL,),
    form=lambda got, args, context: _tensor(got, _states_shape(args), context),
    name="the states",
    mistakes=_state_mistakes,
)

check_rnn_lm_states_shape = check(
    form,
    "check_rnn_lm_states_shape",
    """rnn_lm_states returns a float64 tensor of shape (T, H): one state per token.

    Always judged.""",
    spec=STATES,
)

check_rnn_lm_states_values = check(
    values,
    "check_rnn_lm_states_values",
    """rnn_lm_states gives h_t = tanh(e_t W_xh + h_{t-1} W_hh + b_h), e_t the row of E for token t, with h_{-1} = 0.

    Always judged.""",
    spec=STATES,
)


def _next_token_at(args: list, j: int, seed: int) -> list:
    """The arguments with the token at position j replaced by the next word of the vocabulary."""
    tokens = args[0].clone()
    tokens[j] = (tokens[j] + 1) % args[1].shape[0]
    return [tokens, *args[1:]]


check_rnn_lm_states_causality = check(
    causality,
    "check_rnn_lm_states_causality",
    """Changing the token at position j leaves every state at an earlier position i < j unchanged.

    Not judged when the states are not a (T, H) tensor, or when no state ever changes as an earlier token
    changes (states that remember nothing are trivially causal).""",
    spec=Causality(
        "rnn_lm_states",
        lambda: lm_dims(min_len=2),
        _state_inputs,
        lambda dims: dims["seed"],
        max_examples=5,
        examples=(SMALL,),
        axis=0,
        perturb=_next_token_at,
        form=STATES.form,
        out_axis=0,
        relative=False,
        figure="never",
        leak="{context}: changing the token at position {j} changed the state at earlier position {i}; the "
        "state at t may depend only on tokens 0..t ({count} such pairs)",
        unjudged="no state ever changed when an earlier token changed, so rnn_lm_states carries nothing "
        "from the past (the recurrent term h_{t-1} W_hh is missing?); causality pays only for "
        "states that remember earlier tokens",
    ),
)


def _seed(dims):
    return dims["seed"]


# T >= 2: a wrong answer whose one state is a constant (h_{-1} = 0) is not differentiable, but not wrongly so
check_rnn_lm_states_gradients = check(
    gradients,
    "check_rnn_lm_states_gradients",
    """Gradients of rnn_lm_states with respect to E, W_xh, W_hh and b_h agree with how its output changes.

    Not judged when the states are not a (T, H) tensor (the shape check charges that).""",
    spec=Gradients(
        "rnn_lm_states",
        lambda: lm_dims(min_len=2),
        _state_inputs,
        (1, 2, 3, 4),
        ("E", "W_xh", "W_hh", "b_h"),
        _states_shape,
        _seed,
        max_examples=3,
        examples=(SMALL,),
    ),
)


# --- rnn_lm_loss ---------------------------------------------------------------------------------------

PROBE_RNN_LM_LOSS = Probe(
    "rnn_lm_loss",
    lm_dims(min_len=2),
    lm_inputs,
    rnn_lm.rnn_lm_loss,
    {0: "tokens", 1: "E", 2: "W_xh", 3: "W_hh", 4: "b_h", 5: "W_hy", 6: "b_y"},
    move={0: _next_tokens},
)


def _loss_mistakes(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):
    logits = rnn_lm.rnn_lm_states(tokens, E, W_xh, W_hh, b_h) @ W_hy + b_y  # (T, V)
    ce = lambda lg, tg, reduction="sum": F.cross_entropy(lg, tg, reduction=reduction)  # noqa: E731
    return (
        (
            lambda: ce(logits[:-1], tokens[1:], "mean"),
            "The loss is the sum over the T - 1 predictions, not their mean (reduction='sum').",
        ),
        (lambda: ce(logits[:-1], tokens[:-1]), "logits_t predicts the next token, tokens[t + 1], not the current one."),
        (lambda: ce(logits, tokens), "logits_t predicts the next token, tokens[t + 1], not the current one."),
        (
            lambda: ce(logits[1:], tokens[1:]),
            "Token t + 1 is predicted from h_t (the state after token t), so use "
            "logits[:-1] with the targets tokens[1:].",
        ),
        (lambda: ce(logits[:-1], tokens[1:]) / np.log(2), "Use the natural log (log_softmax), not log base 2."),
        (lambda: ce(logits[:-2], tokens[1:-1]), "The last prediction (tokens[T-1] from h_{T-2}) is missing."),
    )


def _long_enough():
    return lm_dims(min_len=2)


LOSS = Values(
    "rnn_lm_loss",
    _long_enough,
    lm_inputs,
    rnn_lm.rnn_lm_loss_torch,
    max_examples=8,
    examples=(SMALL,),
    form=lambda got, args, context: _tensor(got, (), context, "the loss"),
    name="the loss",
    mistakes=_loss_mistakes,
)

check_rnn_lm_loss_is_scalar = check(
    form,
    "check_rnn_lm_loss_is_scalar",
    """rnn_lm_loss returns a 0-dim float64 tensor.

    Always judged.""",
    spec=LOSS,
    max_examples=3,
)

check_rnn_lm_loss_matches_torch = check(
    values,
    "check_rnn_lm_loss_matches_torch",
    """rnn_lm_loss equals torch.nn.RNN(nonlinearity='tanh') followed by F.cross_entropy(reduction='sum') of the next
    token.

    Always judged.""",
    spec=LOSS,
)

check_rnn_lm_loss_gradients = check(
    gradients,
    "check_rnn_lm_loss_gradients",
    """Gradients of rnn_lm_loss with respect to every weight agree with how the loss changes.

    Not judged when the loss is not a 0-dim tensor (the scalar check charges that).""",
    spec=Gradients(
        "rnn_lm_loss",
        _long_enough,
        lm_inputs,
        (1, 2, 3, 4, 5, 6),
        ("E", "W_xh", "W_hh", "b_h", "W_hy", "b_y"),
        lambda args: (),
        _seed,
        max_examples=3,
        examples=(SMALL,),
    ),
)
