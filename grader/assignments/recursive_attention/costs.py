"""What serving a recursive_attention exercise's call costs (``Exercise.cost``): the estimates the declaration
names as ``costs.<name>``, built from the kit's pieces (grader.checking.standin_costs, which says what they return)."""

from __future__ import annotations

from grader.checking.standin_costs import constant_cost, dim, generic_cost, positive_int, scores_cost, steps

__all__ = ["constant_cost", "generic_cost", "online_cost", "partial_cost", "tiled_cost"]


def partial_cost(args) -> tuple[int, float]:
    q, K, V = (list(args) + [None] * 3)[:3]
    return scores_cost(q, K, V)


def online_cost(args) -> tuple[int, float]:
    q, K, V, block = (list(args) + [None] * 4)[:4]
    size, work = scores_cost(q, K, V)
    return size, work + steps(dim(K, 0) // positive_int(block) + 1, 0)


def tiled_cost(args) -> tuple[int, float]:
    Q, K, V, bq, bk = (list(args) + [None] * 5)[:5]
    size, work = scores_cost(Q, K, V)
    return size, work + steps((dim(Q, -2) // positive_int(bq) + 1) * (dim(K, -2) // positive_int(bk) + 1), 0)
