"""What a stand-in's reply costs, estimated from the argument shapes alone (grader.checking.allowance bounds it
before the reply is computed). Each exercise's declaration names its estimate (``Exercise.cost``); a function
with nothing better to say declares ``generic_cost``.

Each estimate returns ``(elements, work)``: the most numbers the computation holds at once, and roughly
how many element operations it takes, a Python-level loop step counting ``STEP_WORK``. Estimates err
large: an honest request is far below every bound, and arguments the reference would refuse may be
estimated loosely, since it raises before it allocates anything for them.
"""
from __future__ import annotations

from .allowance import STEP_WORK, flat, numel, shape


def _dim(value, axis: int, default: int = 1) -> int:
    s = shape(value)
    return s[axis] if s is not None and len(s) >= abs(axis) + (axis >= 0) else default


def _int(value, default: int = 1) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def _batch(*values) -> int:
    """Elements of the broadcast batch dimensions (all but the last two axes) of the given arrays."""
    leading = [s[:-2] for s in (shape(v) for v in values) if s is not None]
    size = 1
    for axis in range(max((len(s) for s in leading), default=0)):
        size *= max((s[len(s) - 1 - axis] for s in leading if len(s) > axis), default=1)
    return size


def _size(value) -> int:
    """Elements of an argument: an array's, a list's, string's or dict's length, 1 for a scalar."""
    if isinstance(value, (list, tuple, str, dict)):
        return max(len(value), 1)
    return numel(value)


def _args_size(args) -> int:
    return sum(_size(a) for a in flat(args))


def _longest(args) -> int:
    return max((max(s) for s in (shape(a) for a in flat(args)) if s), default=1)


def _ints(args) -> int:
    product = 1
    for a in args:
        product *= _int(a)
    return product


def generic_cost(args) -> tuple[int, float]:
    """For a function with no estimate of its own: its arguments, the square of their longest axis (any
    pairwise interaction, such as attention scores), or the product of its integer arguments (a size it
    is asked to build), whichever is largest."""
    n = max(_args_size(args), _longest(args) ** 2, _ints(args))
    return n, 8.0 * n


def constant_cost(args) -> tuple[int, float]:
    """Arithmetic on a few integers (parameter counts, byte counts)."""
    return _args_size(args), 100.0


def unit_cost(args) -> tuple[int, float]:
    x, h, Wrec, Win = (list(args) + [None] * 4)[:4]
    out = numel(h)
    return _args_size(args) + 2 * out, float(out * (_dim(Wrec, -1) + _dim(Win, -1)) + _args_size(args))


def seq2col_cost(args) -> tuple[int, float]:
    seq, size = (list(args) + [None] * 2)[:2]
    n = numel(seq) * _int(size)
    return 2 * n, 2.0 * n


def mask_cost(args) -> tuple[int, float]:
    T = _int(args[0]) if args else 1
    return 2 * T * T, 2.0 * T * T


def _scores_cost(q, K, V, *extra) -> tuple[int, float]:
    """Attention of queries ``q`` over keys ``K``: the (batch, Nq, Nk) scores dominate."""
    rows = _dim(q, -2) if len(shape(q) or ()) >= 2 else 1
    scores = _batch(q, K, V, *extra) * rows * _dim(K, -2)
    return 3 * scores + numel(q) + numel(K) + numel(V), float(scores * (_dim(q, -1) + _dim(V, -1) + 4))


def sdpa_cost(args) -> tuple[int, float]:
    Q, K, V, mask = (list(args) + [None] * 4)[:4]
    return _scores_cost(Q, K, V, mask)


def mha_cost(args) -> tuple[int, float]:
    X, Wq, Wk, Wv, Wo, heads = (list(args) + [None] * 6)[:6]
    T = _dim(X, -2)
    scores = max(numel(X) // max(_dim(X, -1), 1), 1) * T * _int(heads)
    size = _args_size(args) + 4 * numel(X) + 3 * scores
    return size, float(scores * (2 * _dim(Wq, -1) + 4) + 4 * numel(X) * _dim(X, -1))


def partial_cost(args) -> tuple[int, float]:
    q, K, V = (list(args) + [None] * 3)[:3]
    return _scores_cost(q, K, V)


def rnn_lm_cost(args) -> tuple[int, float]:
    tokens, E, W_xh, W_hh = (list(args) + [None] * 4)[:4]
    T, H = numel(tokens), _dim(W_hh, -1)
    size = _args_size(args) + T * (_dim(E, -1) + 2 * H)
    return size, float(T * (H * (H + _dim(E, -1)) + STEP_WORK))


def _steps(n: int, per_step: float) -> float:
    return n * (per_step + STEP_WORK)


def ar_fit_cost(args) -> tuple[int, float]:
    seq, size = (list(args) + [None] * 2)[:2]
    n, s = _size(seq), _int(size)
    return 2 * n * s, float(n * s * s + n * s)


def forward_cost(args) -> tuple[int, float]:
    seqs, Wrec = (list(args) + [None] * 2)[:2]
    T, H = _dim(seqs, -2), _dim(Wrec, -1)
    elements = _args_size(args) + 2 * numel(seqs) * max(H, 1)
    return elements, _steps(T, max(numel(seqs) // max(T, 1), 1) * H * H)


def self_attention_cost(args) -> tuple[int, float]:
    X = args[0] if args else None
    return sdpa_cost([X, X, X])


def online_cost(args) -> tuple[int, float]:
    q, K, V, block = (list(args) + [None] * 4)[:4]
    size, work = _scores_cost(q, K, V)
    return size, work + _steps(_dim(K, 0) // _int(block) + 1, 0)


def tiled_cost(args) -> tuple[int, float]:
    Q, K, V, bq, bk = (list(args) + [None] * 5)[:5]
    size, work = _scores_cost(Q, K, V)
    return size, work + _steps((_dim(Q, -2) // _int(bq) + 1) * (_dim(K, -2) // _int(bk) + 1), 0)


def token_loop_cost(args) -> tuple[int, float]:
    """n-gram counting and scoring: one Python step per token."""
    n = _args_size(args)
    return 4 * n, _steps(n, 0)


def block_cost(args) -> tuple[int, float]:
    x, params, heads = (list(args) + [None] * 3)[:3]
    size, work = mha_cost([x, None, None, None, None, heads])
    n = _args_size(args)
    return size + 8 * n, work + 16.0 * n * _dim(x, -1)


def context_cost(args) -> tuple[int, float]:
    S, H = (list(args) + [None] * 2)[:2]
    return _scores_cost(H, S, S)


def rnn_layer_cost(args) -> tuple[int, float]:
    """The grader's RNNLayer: one Python step per time step of x_seq (B, T, D)."""
    x_seq, h = (list(args) + [None] * 2)[:2]
    T, H = _dim(x_seq, -2), _dim(h, -1)
    size = _args_size(args) + numel(x_seq) // max(_dim(x_seq, -1), 1) * H * 2
    return size, _steps(T, numel(h) * (H + _dim(x_seq, -1)))
