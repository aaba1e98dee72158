"""What serving a sequence_models exercise's call costs (``Exercise.cost``): the estimates the declaration names
as ``costs.<name>``, built from the kit's pieces (grader.checking.standin_costs, which says what they return)."""

from __future__ import annotations

from grader.checking.allowance import numel
from grader.checking.standin_costs import args_size, constant_cost, dim, positive_int, scores_cost, size, steps

__all__ = [
    "ar_fit_cost",
    "constant_cost",
    "forward_cost",
    "mask_cost",
    "self_attention_cost",
    "seq2col_cost",
    "unit_cost",
]


def seq2col_cost(args) -> tuple[int, float]:
    seq, filter_size = (list(args) + [None] * 2)[:2]
    n = numel(seq) * positive_int(filter_size)
    return 2 * n, 2.0 * n


def ar_fit_cost(args) -> tuple[int, float]:
    seq, filter_size = (list(args) + [None] * 2)[:2]
    n, s = size(seq), positive_int(filter_size)
    return 2 * n * s, float(n * s * s + n * s)


def unit_cost(args) -> tuple[int, float]:
    x, h, Wrec, Win = (list(args) + [None] * 4)[:4]
    out = numel(h)
    return args_size(args) + 2 * out, float(out * (dim(Wrec, -1) + dim(Win, -1)) + args_size(args))


def forward_cost(args) -> tuple[int, float]:
    seqs, Wrec = (list(args) + [None] * 2)[:2]
    T, H = dim(seqs, -2), dim(Wrec, -1)
    elements = args_size(args) + 2 * numel(seqs) * max(H, 1)
    return elements, steps(T, max(numel(seqs) // max(T, 1), 1) * H * H)


def mask_cost(args) -> tuple[int, float]:
    T = positive_int(args[0]) if args else 1
    return 2 * T * T, 2.0 * T * T


def self_attention_cost(args) -> tuple[int, float]:
    X = args[0] if args else None
    return scores_cost(X, X, X, None)
