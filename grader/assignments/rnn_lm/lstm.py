"""Checks for lstm_cell: values against torch.nn.LSTMCell, the cell's memory, batch order, gradients.

``lstm_cell(x, h, c, W, b)`` returns two tensors, so the gate that keeps trivial code from the
properties (its probe's ``per_output=True``) and the gradient property look at each output on its own.
"""

from __future__ import annotations

import torch

from grader.checking.base import CheckFailed, Lazy, NotJudged, call, fail_if, for_all, format_call
from grader.checking.compare import compare_arrays, describe, kind_of
from grader.checking.gate import Probe
from grader.checking.positions import Part, Permutation, permutation_equivariance, reversed_if_identity
from grader.checking.properties import fd_settings
from grader.checking.strategies import gaussian, st
from grader.checking.templates import Values, check, form, values
from reference import rnn_lm

SMALL = {"B": 2, "D": 3, "H": 2, "seed": 0}


def lstm_dims(*, min_batch: int = 1):
    """Sizes of one LSTM step: batch B, input width D, hidden width H, and a seed for the numbers."""
    return st.fixed_dictionaries(
        {"B": st.integers(min_batch, 3), "D": st.integers(1, 4), "H": st.integers(1, 3), "seed": st.integers(0, 2**16)}
    )


def lstm_inputs(dims: dict) -> list[torch.Tensor]:
    """``[x (B, D), h (B, H), c (B, H), W (4H, H + D), b (4H,)]`` in float64."""
    B, D, H, seed = dims["B"], dims["D"], dims["H"], dims["seed"]
    return [
        gaussian(seed, B, D),
        gaussian(seed + 1, B, H),
        gaussian(seed + 2, B, H),
        gaussian(seed + 3, 4 * H, H + D) / 2,
        gaussian(seed + 4, 4 * H),
    ]


PROBE_LSTM_CELL = Probe(
    "lstm_cell", lstm_dims(), lstm_inputs, rnn_lm.lstm_cell, {0: "x", 1: "h", 2: "c", 3: "W", 4: "b"}, per_output=True
)


def _pair(value, B: int, H: int, context, dtype=torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """The two outputs (h_next, c_next), or CheckFailed naming what is wrong with them."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise CheckFailed(
            f"{context}: lstm_cell should return a tuple (h_next, c_next); got {describe(value)}", kind="type"
        )
    for name, part in zip(("h_next", "c_next"), value):
        if kind_of(part) != "tensor":
            raise CheckFailed(f"{context}: {name} should be a torch tensor; got {describe(part)}", kind="type")
        if tuple(part.shape) != (B, H):
            raise CheckFailed(
                f"{context}: {name} has shape {tuple(part.shape)}; expected (B, H) = {(B, H)}", kind="shape"
            )
        if part.dtype != dtype:
            raise CheckFailed(
                f"{context}: {name} has dtype {part.dtype}; expected {dtype} (the inputs' dtype)", kind="dtype"
            )
    return value[0].detach(), value[1].detach()


def _mistakes(x, h, c, W, b):
    H = h.shape[-1]
    sg = torch.sigmoid

    def cell(order=(0, 1, 2, 3), cat_first=True, memory=None, h_of=None, g_act=torch.tanh):
        z = (torch.cat([h, x], -1) if cat_first else torch.cat([x, h], -1)) @ W.T + b
        blocks = z.split(H, dim=-1)
        i, f, o, g = (blocks[k] for k in order)
        i, f, o, g = sg(i), sg(f), sg(o), g_act(g)
        c2 = memory(i, f, g) if memory else f * c + i * g
        return torch.stack([h_of(o, c2) if h_of else o * torch.tanh(c2), c2])

    return (
        (
            lambda: cell(order=(0, 1, 3, 2)),
            "The gate order is (i, f, o, g): the third block of W is the output gate "
            "and the last one the candidate g (torch.nn.LSTMCell orders them i, f, g, o).",
        ),
        (
            lambda: cell(memory=lambda i, f, g: f * g + i * c),
            "The forget gate multiplies the old cell c and the input gate the candidate g: c' = f * c + i * g.",
        ),
        (lambda: cell(h_of=lambda o, c2: o * c2), "h' = o * tanh(c'): the tanh of the new cell is missing."),
        (lambda: cell(cat_first=False), "W acts on the concatenation [h; x] (h first), not [x; h]."),
        (lambda: cell(g_act=torch.sigmoid), "The candidate g uses tanh, not sigmoid."),
        (lambda: cell(h_of=lambda o, c2: o * torch.tanh(c)), "h' uses the new cell c', not the old one."),
    )


def _stacked(got, args, context) -> torch.Tensor:
    return torch.stack(_pair(got, args[0].shape[0], args[1].shape[1], context))  # (2, B, H)


CELL = Values(
    "lstm_cell",
    lstm_dims,
    lstm_inputs,
    lambda *args: torch.stack(rnn_lm.lstm_cell_torch(*args)),  # (2, B, H)
    max_examples=8,
    examples=(SMALL,),
    name="(h_next, c_next)",
    mistakes=_mistakes,
    form=_stacked,
)

check_lstm_cell_shapes = check(
    form,
    "check_lstm_cell_shapes",
    """lstm_cell returns a tuple (h_next, c_next) of two tensors of shape (B, H) in the inputs' dtype.

    Always judged.""",
    spec=CELL,
)

check_lstm_cell_matches_torch = check(
    values,
    "check_lstm_cell_matches_torch",
    """lstm_cell(x, h, c, W, b) equals torch.nn.LSTMCell with W and b mapped to torch's layout.

    Always judged.""",
    spec=CELL,
)


def check_lstm_cell_keeps_memory(student):
    """With a forget gate of exactly 1 and an input gate of exactly 0, c_next equals c.

    Not judged when the result is not a pair (h_next, c_next) of (B, H) tensors (the shapes check charges that)."""

    def prop(dims):
        x, h, c, W, b = lstm_inputs(dims)
        H = dims["H"]
        W[: 2 * H] = 0  # the input and forget gates see nothing but their bias
        b[:H], b[H : 2 * H] = -1000.0, 1000.0  # sigmoid(-1000) = 0 and sigmoid(1000) = 1 exactly in float64
        args = [x, h, c, W, b]
        context = Lazy(lambda: f"for {format_call('lstm_cell', args)}, where i = 0 and f = 1 exactly")
        _, c_next = _pair(call(student, "lstm_cell", *args).value, dims["B"], H, context)
        fail_if(
            compare_arrays(c_next, c, name="c_next", rtol=1e-12, atol=1e-12),
            context + "; a closed input gate and an open forget gate must keep the cell unchanged",
        )

    for_all(lstm_dims(), prop, max_examples=4, examples=(SMALL,))


def _stacked(value, args, context) -> torch.Tensor:
    """(h_next, c_next) stacked into one (2, B, H) tensor (see _pair)."""
    return torch.stack(_pair(value, args[0].shape[0], args[1].shape[1], context))


check_lstm_cell_batch_permutation_equivariance = check(
    permutation_equivariance,
    "check_lstm_cell_batch_permutation_equivariance",
    """Reordering the examples of a batch reorders h_next and c_next the same way.

    Not judged when the result is not a pair (h_next, c_next) of (B, H) tensors (the shapes check charges that).""",
    spec=Permutation(
        "lstm_cell",
        lambda: lstm_dims(min_batch=2),
        lstm_inputs,
        lambda dims: dims["seed"],
        max_examples=4,
        examples=({**SMALL, "B": 3},),
        arguments=(0, 1, 2),
        axis=0,
        permutation=reversed_if_identity,
        form=_stacked,
        parts=(Part(axis=1, expected="; each example's result must not depend on its place in the batch"),),
        context="for {call} and the batch reordered as {perm}",
        label="lstm_cell on the reordered batch",
    ),
)


NAMES = ("x", "h", "c", "W", "b")


# by hand: not templates.gradients, whose objective is one tensor's sum(output * c): here two outputs, two cotangents.
def check_lstm_cell_gradients(student):
    """Gradients of lstm_cell with respect to x, h, c, W and b agree with how its own outputs change.

    Not judged when the result is not a pair (h_next, c_next) of (B, H) tensors (the shapes check charges that)."""

    def prop(dims):
        args = lstm_inputs(dims)
        B, H, seed = dims["B"], dims["H"], dims["seed"]
        cots = [gaussian(seed + 7, B, H), gaussian(seed + 8, B, H)]
        context = Lazy(lambda: f"for {format_call('lstm_cell', args)}")
        reply = call(student, "lstm_cell", *args, grad_wrt=tuple(range(5)), cotangent=cots)
        try:
            _pair(reply.value, B, H, context)
        except CheckFailed:
            raise NotJudged(
                f"{context} the result is {describe(reply.value)} (see the values check)", kind="not_judged"
            ) from None
        if reply.grads is None:
            raise CheckFailed(
                f"{context}: the results are not differentiable; build them from torch operations on the inputs",
                kind="not_differentiable",
            )
        for name, g, a in zip(NAMES, reply.grads, args):
            if kind_of(g) != "tensor" or tuple(g.shape) != tuple(a.shape):
                raise CheckFailed(
                    f"{context}: the gradient with respect to {name} is {describe(g)}", kind="not_differentiable"
                )

        def objective(moved):
            h2, c2 = _pair(call(student, "lstm_cell", *moved).value, B, H, context)
            return float((h2 * cots[0]).sum() + (c2 * cots[1]).sum())

        eps, rtol = fd_settings(torch.float64)
        directions = [gaussian(seed + 31 + k, *a.shape) for k, a in enumerate(args)]
        predicted = [float((g.to(torch.float64) * d).sum()) for g, d in zip(reply.grads, directions)]

        def rate(which):  # d/dt of the objective along the directions of the arguments in ``which``
            plus, minus = list(args), list(args)
            for k in which:
                plus[k], minus[k] = args[k] + eps * directions[k], args[k] - eps * directions[k]
            return (objective(plus) - objective(minus)) / (2 * eps)

        if abs(rate(range(5)) - sum(predicted)) <= rtol * (1 + sum(abs(p) for p in predicted)):
            return
        for k, name in enumerate(NAMES):  # which argument's gradient is off
            numeric = rate([k])
            if abs(numeric - predicted[k]) > rtol * (1 + abs(predicted[k])):
                raise CheckFailed(
                    f"{context}: the gradient autograd found with respect to {name} does not match how "
                    f"your function's own outputs change: moving {name} along a random direction changes "
                    f"sum(h_next * a) + sum(c_next * b) at rate {numeric:.6g} (finite differences), but "
                    f"the gradient predicts {predicted[k]:.6g}",
                    kind="not_differentiable",
                )
        raise CheckFailed(
            f"{context}: the gradients autograd found do not match how your function's own outputs change",
            kind="not_differentiable",
        )

    for_all(lstm_dims(), prop, max_examples=3, examples=(SMALL,))
