"""What serving an lm_modules exercise's call costs (``Exercise.cost``, and the stand-in classes' forward in
``stand_ins.py``): the estimates named as ``costs.<name>``, built from the kit's pieces
(grader.checking.standin_costs, which says what they return)."""

from __future__ import annotations

from grader.checking.allowance import numel
from grader.checking.standin_costs import args_size, dim, generic_cost, steps

__all__ = ["generic_cost", "rnn_layer_cost"]


def rnn_layer_cost(args) -> tuple[int, float]:
    """The grader's RNNLayer: one Python step per time step of x_seq (B, T, D)."""
    x_seq, h = (list(args) + [None] * 2)[:2]
    T, H = dim(x_seq, -2), dim(h, -1)
    size = args_size(args) + numel(x_seq) // max(dim(x_seq, -1), 1) * H * 2
    return size, steps(T, numel(h) * (H + dim(x_seq, -1)))
