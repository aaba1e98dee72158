"""What serving an rnn_lm exercise's call costs (``Exercise.cost``): the estimates the declaration names as
``costs.<name>``, built from the kit's pieces (grader.checking.standin_costs, which says what they return)."""

from __future__ import annotations

from grader.checking.allowance import STEP_WORK, numel
from grader.checking.standin_costs import args_size, constant_cost, dim, generic_cost, scores_cost, steps

__all__ = ["constant_cost", "context_cost", "generic_cost", "rnn_lm_cost", "token_loop_cost"]


def rnn_lm_cost(args) -> tuple[int, float]:
    tokens, E, W_xh, W_hh = (list(args) + [None] * 4)[:4]
    T, H = numel(tokens), dim(W_hh, -1)
    size = args_size(args) + T * (dim(E, -1) + 2 * H)
    return size, float(T * (H * (H + dim(E, -1)) + STEP_WORK))


def token_loop_cost(args) -> tuple[int, float]:
    """n-gram counting and scoring: one Python step per token."""
    n = args_size(args)
    return 4 * n, steps(n, 0)


def context_cost(args) -> tuple[int, float]:
    S, H = (list(args) + [None] * 2)[:2]
    return scores_cost(H, S, S)
