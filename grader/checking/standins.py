"""Stand-ins: grader-computed replacements for the student functions another exercise builds on.

When an exercise's function uses another student function (``forward`` calls ``recurrent_unit``,
``ar_fit`` calls ``seq2col``, ``masked_self_attention`` calls ``causal_mask``), it is graded with a
stand-in in that function's place. The student's code calls the stand-in as usual; inside the sandbox
the call travels to the grader, which computes the reply here and records the call itself
(:class:`grader.checking.calls.Served`). So a wrong, missing or hanging helper costs only its own exercise, and
what the grader counts (how often ``forward`` called the unit, on what shapes) cannot be forged from
inside the student's process.

The unit's stand-in is deliberately *not* the course's unit (relu): a ``forward`` whose result
matches a composition of this other unit really composes the function it was given. It is fixed
(no randomness) so that regrades stay byte-identical, and it is never shipped with the release.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import json
from dataclasses import dataclass
from typing import Callable, Mapping

import torch

import reference

from .calls import HelperError, Reply, StandInClass, StandInHandler, StudentCode
from .objectcalls import ObjectCalls
from .standin_costs import (
    COSTS,
    generic_cost,
    mask_cost,
    mha_cost,
    partial_cost,
    rnn_layer_cost,
    rnn_lm_cost,
    sdpa_cost,
    seq2col_cost,
    unit_cost,
)


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


@dataclass(frozen=True)
class StandIn:
    """A student function's stand-in: its parameter names, the trusted function that answers calls, and
    an estimate of what answering costs (``(elements, work)`` from the arguments; see grader.checking.allowance)."""

    name: str
    params: tuple[str, ...]
    fn: Callable
    cost: Callable[[list], tuple[int, float]] = generic_cost

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


REFERENCE_MODULES = ("reference", "reference.transformer", "reference.recursive", "reference.rnn_lm", "reference.lm_modules")


def _reference(module: str, name: str) -> Callable:
    """``reference.<module>.<name>``, looked up when first called (so this table imports nothing heavy)."""
    def fn(*args):
        return getattr(importlib.import_module(f"reference.{module}"), name)(*args)
    fn.__name__ = name
    return fn


def _param(p: inspect.Parameter) -> str:
    """A parameter as the stub takes it: its name, and ``=<JSON literal>`` for a default that has one."""
    if p.default is inspect.Parameter.empty:
        return p.name
    try:
        return f"{p.name}={json.dumps(p.default)}"
    except (TypeError, ValueError):
        return p.name


@functools.cache
def course_stand_in(name: str) -> StandIn | None:
    """The course's own ``name`` (the reference implementation) as a stand-in, with the reference's
    parameters; None when the reference has no such function. Built on first use: it imports the
    reference module that defines it."""
    for module in REFERENCE_MODULES:
        fn = getattr(importlib.import_module(module), name, None)
        if callable(fn):
            params = tuple(_param(p) for p in inspect.signature(fn).parameters.values())
            return StandIn(name, params, fn, COSTS.get(name, generic_cost))
    return None


# Stand-ins an exercise declares (Exercise.requires) that differ from the course's own function or must be
# known without importing the reference. Parameters are named in order; "mask=null" gives one a default
# (a JSON literal) the stub fills in.
STAND_INS: dict[str, StandIn] = {
    # sequence_models: forward is graded with a unit that is not the course's (see other_unit)
    "recurrent_unit": StandIn("recurrent_unit", ("x", "h_prev", "Wrec", "Win"), other_unit, unit_cost),
    "seq2col": StandIn("seq2col", ("seq", "filter_size"), reference.seq2col, seq2col_cost),
    "causal_mask": StandIn("causal_mask", ("T",), reference.causal_mask, mask_cost),
    # attention
    "scaled_dot_product_attention": StandIn("scaled_dot_product_attention", ("Q", "K", "V", "mask=null"),
                                            _reference("transformer", "scaled_dot_product_attention"), sdpa_cost),
    "multi_head_attention": StandIn("multi_head_attention", ("X", "Wq", "Wk", "Wv", "Wo", "n_heads", "mask=null"),
                                    _reference("transformer", "multi_head_attention"), mha_cost),
    "layer_norm": StandIn("layer_norm", ("x", "gamma", "beta", "eps=1e-05"), _reference("transformer", "layer_norm")),
    # recursive_attention
    "attention_partial": StandIn("attention_partial", ("q", "K", "V"), _reference("recursive", "attention_partial"),
                                 partial_cost),
    "merge": StandIn("merge", ("a", "b"), _reference("recursive", "merge")),
    # rnn_lm
    "rnn_lm_states": StandIn("rnn_lm_states", ("tokens", "E", "W_xh", "W_hh", "b_h"), _reference("rnn_lm", "rnn_lm_states"),
                             rnn_lm_cost),
}


# Stand-in classes (grader.jail.objects): a class another class builds on, laid out as the course's (the same
# parameter names), whose forward the grader answers with the course's formula and the parameters the
# student's module holds. lm_modules: RNNLayer is graded with this RecurrentCell, RNNLanguageModel with
# this RNNLayer (and its cell).
_CELL_SPEC = {"init": ["input_dim", "hidden_dim"], "forward": ["x", "h_prev"],
              "linears": [["input_to_hidden", "input_dim", "hidden_dim"], ["hidden_to_hidden", "hidden_dim", "hidden_dim"]]}
_WEIGHTS = ("W_ih", "b_ih", "W_hh", "b_hh")
RECURRENT_CELL = StandInClass("RecurrentCell", _CELL_SPEC, StandIn(
    "RecurrentCell.forward", ("x", "h_prev", *_WEIGHTS), _reference("lm_modules", "recurrent_cell_step")))
RNN_LAYER = StandInClass("RNNLayer", {
    "init": ["input_dim", "hidden_dim"], "forward": ["x_seq", "h"],
    "children": [["cell", "RecurrentCell", _CELL_SPEC, ["input_dim", "hidden_dim"]]]},
    StandIn("RNNLayer.forward", ("x_seq", "h", *_WEIGHTS), _reference("lm_modules", "rnn_layer_states"), rnn_layer_cost),
    children=(RECURRENT_CELL,))


class WithStandIns(ObjectCalls):
    """The student's code as an exercise's checks see it: every call runs with the exercise's stand-ins.
    ``served`` collects the names of the stand-ins the calls actually used (what the grader answered),
    so a failure message mentions only those; ``begin()`` empties it at the start of each check."""

    def __init__(self, student: StudentCode, stand_ins: Mapping[str, StandInHandler]):
        self.student, self.stand_ins = student, dict(stand_ins)
        self.served: set[str] = set()

    def begin(self) -> None:
        self.served = set()

    def defines(self, name: str) -> bool:
        return self.student.defines(name)

    def get(self, name: str):
        return self.student.get(name)

    def call(self, name: str, args, *, stand_ins: Mapping[str, StandInHandler] | None = None, **options) -> Reply:
        reply = self.student.call(name, args, stand_ins={**self.stand_ins, **(stand_ins or {})}, **options)
        self.served.update(s.name for s in reply.served)
        return reply


def for_exercise(student: StudentCode, exercise_id: str, requires=(), others=()) -> WithStandIns:
    """``student`` as exercise ``exercise_id`` is graded: every other graded function of the assignment
    (``others``) is served by the grader as the course's own function, and the ones the exercise declares
    (``requires``) by the stand-in it declares (unknown names are an error)."""
    table = {name: handler for name in others if name != exercise_id and (handler := course_stand_in(name))}
    table.update({name: STAND_INS[name] for name in requires})
    return WithStandIns(student, table)
