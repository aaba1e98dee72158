"""Stand-ins: grader-computed replacements for the student functions another exercise builds on.

When an exercise's function uses another student function (``forward`` calls ``recurrent_unit``,
``ar_fit`` calls ``seq2col``, ``masked_self_attention`` calls ``causal_mask``), it is graded with a
stand-in in that function's place. The student's code calls the stand-in as usual; inside the sandbox
the call travels to the grader, which computes the reply here and records the call itself
(:class:`grader.checking.calls.Served`). So a wrong, missing or hanging helper costs only its own exercise, and
what the grader counts (how often ``forward`` called the unit, on what shapes) cannot be forged from
inside the student's process.

Every stand-in comes from an exercise's declaration (:class:`grader.checking.exercise.Exercise`): its
parameters from the reference's signature, the function that answers (the reference, or the declared
``stand_in`` where another exercise ``requires`` it) and its cost model. Stand-ins are fixed (no
randomness) so that regrades stay byte-identical, and never shipped with the release.
"""

from __future__ import annotations

import functools
import inspect
import json
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import torch

from .calls import HelperError, Reply, StandInHandler, StudentCode
from .objectcalls import ObjectCalls
from .standin_costs import generic_cost


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
        leaves = [
            a.detach().clone().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a for a in args
        ]
        try:
            with torch.enable_grad():  # in-process, this runs inside the student's backward pass, where grad is off
                out = self.fn(*leaves)
                outs, cots = (list(out), cotangent) if isinstance(out, (list, tuple)) else ([out], [cotangent])
                wrt = [a for a in leaves if isinstance(a, torch.Tensor) and a.requires_grad]
                if (
                    not isinstance(cots, (list, tuple))
                    or len(cots) != len(outs)
                    or not all(
                        isinstance(c, torch.Tensor) and tuple(c.shape) == tuple(o.shape) for o, c in zip(outs, cots)
                    )
                ):
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


def _param(p: inspect.Parameter) -> str:
    """A parameter as the stub takes it: its name, and ``=<JSON literal>`` for a default that has one."""
    if p.default is inspect.Parameter.empty:
        return p.name
    try:
        return f"{p.name}={json.dumps(p.default)}"
    except (TypeError, ValueError):
        return p.name


def parameters(reference: Callable) -> tuple[str, ...]:
    """The parameters of ``reference`` as a stand-in declares them (``mask=null`` for a default the stub fills in)."""
    return tuple(_param(p) for p in inspect.signature(reference).parameters.values())


@functools.cache
def stand_in(name: str, fn: Callable, reference: Callable, cost: Callable | None) -> StandIn:
    """The stand-in for the student's ``name``: ``fn`` answers its calls, with the parameters of ``reference``
    (the course's function, whose signature the notebook's stub shares) and ``cost`` (generic_cost when none
    is declared: tests/test_declarations.py asks every declaration for one)."""
    return StandIn(name, parameters(reference), fn, cost or generic_cost)


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


def for_exercise(student: StudentCode, exercise, others: Sequence[str] = ()) -> WithStandIns:
    """``student`` as ``exercise`` (a :class:`grader.checking.exercise.Exercise`) is graded: with the stand-ins
    its declaration gives (:meth:`~grader.checking.exercise.Exercise.stand_ins`)."""
    return WithStandIns(student, exercise.stand_ins(others))
