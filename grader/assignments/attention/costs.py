"""What serving an attention exercise's call costs (``Exercise.cost``): the estimates the declaration names as
``costs.<name>``, built from the kit's pieces (grader.checking.standin_costs, which says what they return)."""

from __future__ import annotations

from grader.checking.allowance import numel
from grader.checking.standin_costs import args_size, constant_cost, dim, generic_cost, positive_int, scores_cost

__all__ = ["block_cost", "constant_cost", "generic_cost", "mha_cost", "sdpa_cost", "self_attention_cost"]


def sdpa_cost(args) -> tuple[int, float]:
    Q, K, V, mask = (list(args) + [None] * 4)[:4]
    return scores_cost(Q, K, V, mask)


def self_attention_cost(args) -> tuple[int, float]:
    X = args[0] if args else None
    return sdpa_cost([X, X, X])


def mha_cost(args) -> tuple[int, float]:
    X, Wq, Wk, Wv, Wo, heads = (list(args) + [None] * 6)[:6]
    T = dim(X, -2)
    scores = max(numel(X) // max(dim(X, -1), 1), 1) * T * positive_int(heads)
    size = args_size(args) + 4 * numel(X) + 3 * scores
    return size, float(scores * (2 * dim(Wq, -1) + 4) + 4 * numel(X) * dim(X, -1))


def block_cost(args) -> tuple[int, float]:
    x, params, heads = (list(args) + [None] * 3)[:3]
    size, work = mha_cost([x, None, None, None, None, heads])
    n = args_size(args)
    return size + 8 * n, work + 16.0 * n * dim(x, -1)
