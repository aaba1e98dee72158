"""Stand-ins: grader-computed replacements for the student functions another exercise builds on.

When an exercise's function uses another student function (``forward`` calls ``recurrent_unit``,
``ar_fit`` calls ``seq2col``, ``masked_self_attention`` calls ``causal_mask``), it is graded with a
stand-in in that function's place. The student's code calls the stand-in as usual; inside the sandbox
the call travels to the grader, which computes the reply here and records the call itself
(:class:`grader.calls.Served`). So a wrong, missing or hanging helper costs only its own exercise, and
what the grader counts (how often ``forward`` called the unit, on what shapes) cannot be forged from
inside the student's process.

The unit's stand-in is deliberately *not* the course's unit (relu): a ``forward`` whose result
matches a composition of this other unit really composes the function it was given. It is fixed
(no randomness) so that regrades stay byte-identical, and it is never shipped with the release.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, Mapping

import torch

import reference

from .allowance import STEP_WORK, flat, numel, shape
from .calls import HelperError, Reply, StandInHandler, StudentCode


def other_unit(x: torch.Tensor, h_prev: torch.Tensor, Wrec: torch.Tensor, Win: torch.Tensor) -> torch.Tensor:
    """The unit ``forward`` is graded with: ``tanh(h_prev @ Wrec.T + x @ Win.T + 1/2) + h_prev / 4``.

    Same shapes and conventions as the course's ``recurrent_unit`` (batch or single example), smooth,
    and different enough from relu that no formula written for relu reproduces it.
    """
    for name, value in (("x", x), ("h_prev", h_prev), ("Wrec", Wrec), ("Win", Win)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"recurrent_unit expects torch tensors; {name} is a {type(value).__name__}")
    d_h = h_prev.shape[-1] if h_prev.ndim else 0
    if Wrec.ndim != 2 or tuple(Wrec.shape) != (d_h, d_h):
        raise ValueError(f"recurrent_unit: Wrec must have shape (d_h, d_h) = ({d_h}, {d_h}); got {tuple(Wrec.shape)}")
    if x.ndim not in (1, 2) or x.ndim != h_prev.ndim or x.shape[:-1] != h_prev.shape[:-1]:
        raise ValueError(f"recurrent_unit: x and h_prev must have shapes (B, d_in) and (B, d_h), or (d_in,) and "
                         f"(d_h,); got {tuple(x.shape)} and {tuple(h_prev.shape)}")
    if Win.ndim != 2 or Win.shape[0] != d_h or Win.shape[1] != x.shape[-1]:
        raise ValueError(f"recurrent_unit: Win must have shape (d_h, d_in) = ({d_h}, {x.shape[-1]}); got {tuple(Win.shape)}")
    return torch.tanh(h_prev @ Wrec.T + x @ Win.T + 0.5) + h_prev / 4  # (B, d_h) or (d_h,)


# --- what a reply costs, from the argument shapes alone (grader.allowance bounds it before computing) -----
# Each estimate returns (elements, work): the most numbers the computation holds at once, and roughly how
# many element operations it takes (a Python-level loop step counts STEP_WORK). Arguments the reference
# would refuse may be estimated loosely: it raises before it allocates anything for them.


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


def _args_size(args) -> int:
    return sum(numel(a) for a in flat(args))


def _generic_cost(args) -> tuple[int, float]:
    n = _args_size(args)
    return n, 4.0 * n


def _unit_cost(args) -> tuple[int, float]:
    x, h, Wrec, Win = (list(args) + [None] * 4)[:4]
    out = numel(h)
    return _args_size(args) + 2 * out, float(out * (_dim(Wrec, -1) + _dim(Win, -1)) + _args_size(args))


def _seq2col_cost(args) -> tuple[int, float]:
    seq, size = (list(args) + [None] * 2)[:2]
    n = numel(seq) * _int(size)
    return 2 * n, 2.0 * n


def _mask_cost(args) -> tuple[int, float]:
    T = _int(args[0]) if args else 1
    return 2 * T * T, 2.0 * T * T


def _scores_cost(q, K, V, *extra) -> tuple[int, float]:
    """Attention of queries ``q`` over keys ``K``: the (batch, Nq, Nk) scores dominate."""
    rows = _dim(q, -2) if len(shape(q) or ()) >= 2 else 1
    scores = _batch(q, K, V, *extra) * rows * _dim(K, -2)
    return 3 * scores + numel(q) + numel(K) + numel(V), float(scores * (_dim(q, -1) + _dim(V, -1) + 4))


def _sdpa_cost(args) -> tuple[int, float]:
    Q, K, V, mask = (list(args) + [None] * 4)[:4]
    return _scores_cost(Q, K, V, mask)


def _mha_cost(args) -> tuple[int, float]:
    X, Wq, Wk, Wv, Wo, heads = (list(args) + [None] * 6)[:6]
    T = _dim(X, -2)
    scores = max(numel(X) // max(_dim(X, -1), 1), 1) * T * _int(heads)
    size = _args_size(args) + 4 * numel(X) + 3 * scores
    return size, float(scores * (2 * _dim(Wq, -1) + 4) + 4 * numel(X) * _dim(X, -1))


def _partial_cost(args) -> tuple[int, float]:
    q, K, V = (list(args) + [None] * 3)[:3]
    return _scores_cost(q, K, V)


def _rnn_lm_cost(args) -> tuple[int, float]:
    tokens, E, W_xh, W_hh = (list(args) + [None] * 4)[:4]
    T, H = numel(tokens), _dim(W_hh, -1)
    size = _args_size(args) + T * (_dim(E, -1) + 2 * H)
    return size, float(T * (H * (H + _dim(E, -1)) + STEP_WORK))


@dataclass(frozen=True)
class StandIn:
    """A student function's stand-in: its parameter names, the trusted function that answers calls, and
    an estimate of what answering costs (``(elements, work)`` from the arguments; see grader.allowance)."""

    name: str
    params: tuple[str, ...]
    fn: Callable
    cost: Callable[[list], tuple[int, float]] = _generic_cost

    def __call__(self, args: list):
        try:
            return self.fn(*args)
        except (TypeError, ValueError, RuntimeError, IndexError) as exc:  # what the real function would raise
            raise HelperError(type(exc).__name__, str(exc)) from None

    def vjp(self, args: list, cotangent) -> list:
        """Gradients of ``sum(fn(*args) * cotangent)`` with respect to each tensor argument."""
        leaves = [a.detach().clone().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a
                  for a in args]
        try:
            with torch.enable_grad():  # in-process, this runs inside the student's backward pass, where grad is off
                out = self.fn(*leaves)
                outs, cots = (list(out), cotangent) if isinstance(out, (list, tuple)) else ([out], [cotangent])
                wrt = [a for a in leaves if isinstance(a, torch.Tensor) and a.requires_grad]
                if not isinstance(cots, (list, tuple)) or len(cots) != len(outs) or not all(
                        isinstance(c, torch.Tensor) and tuple(c.shape) == tuple(o.shape) for o, c in zip(outs, cots)):
                    raise ValueError(f"{self.name}: the gradient flowing back has the wrong shape")
                objective = sum((o * c.to(o.dtype)).sum() for o, c in zip(outs, cots) if o.requires_grad)
                got = iter(torch.autograd.grad(objective, wrt, allow_unused=True))
        except (TypeError, ValueError, RuntimeError) as exc:
            raise HelperError(type(exc).__name__, str(exc)) from None
        grads = []
        for a in leaves:
            if isinstance(a, torch.Tensor) and a.requires_grad:
                g = next(got)
                grads.append(torch.zeros_like(a) if g is None else g.detach())
            else:
                grads.append(None)
        return grads


def _reference(module: str, name: str) -> Callable:
    """``reference.<module>.<name>``, looked up when first called (so this table imports nothing heavy)."""
    def fn(*args):
        return getattr(importlib.import_module(f"reference.{module}"), name)(*args)
    fn.__name__ = name
    return fn


# Parameters are named in order; "mask=null" gives one a default (a JSON literal) the stub fills in.
STAND_INS: dict[str, StandIn] = {
    # sequence_models
    "recurrent_unit": StandIn("recurrent_unit", ("x", "h_prev", "Wrec", "Win"), other_unit, _unit_cost),
    "seq2col": StandIn("seq2col", ("seq", "filter_size"), reference.seq2col, _seq2col_cost),
    "causal_mask": StandIn("causal_mask", ("T",), reference.causal_mask, _mask_cost),
    # attention
    "scaled_dot_product_attention": StandIn("scaled_dot_product_attention", ("Q", "K", "V", "mask=null"),
                                            _reference("transformer", "scaled_dot_product_attention"), _sdpa_cost),
    "multi_head_attention": StandIn("multi_head_attention", ("X", "Wq", "Wk", "Wv", "Wo", "n_heads", "mask=null"),
                                    _reference("transformer", "multi_head_attention"), _mha_cost),
    "layer_norm": StandIn("layer_norm", ("x", "gamma", "beta", "eps=1e-05"), _reference("transformer", "layer_norm")),
    # recursive_attention
    "attention_partial": StandIn("attention_partial", ("q", "K", "V"), _reference("recursive", "attention_partial"),
                                 _partial_cost),
    "merge": StandIn("merge", ("a", "b"), _reference("recursive", "merge")),
    # rnn_lm
    "rnn_lm_states": StandIn("rnn_lm_states", ("tokens", "E", "W_xh", "W_hh", "b_h"), _reference("rnn_lm", "rnn_lm_states"),
                             _rnn_lm_cost),
}


class WithStandIns:
    """The student's code as an exercise's checks see it: every call runs with the exercise's stand-ins."""

    def __init__(self, student: StudentCode, stand_ins: Mapping[str, StandInHandler]):
        self.student, self.stand_ins = student, dict(stand_ins)

    def defines(self, name: str) -> bool:
        return self.student.defines(name)

    def get(self, name: str):
        return self.student.get(name)

    def call(self, name: str, args, *, stand_ins: Mapping[str, StandInHandler] | None = None, **options) -> Reply:
        return self.student.call(name, args, stand_ins={**self.stand_ins, **(stand_ins or {})}, **options)


def for_exercise(student: StudentCode, requires) -> StudentCode:
    """``student`` with a stand-in for each function the exercise requires (unknown names are an error)."""
    if not requires:
        return student
    return WithStandIns(student, {name: STAND_INS[name] for name in requires})
