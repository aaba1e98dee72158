"""What the grader may spend on one graded call's behalf: work it does on arguments the student chose.

A stand-in (:mod:`grader.checking.standins`) computes its reply in the grading process, on arguments the student's
code picked. Unbounded, one call asking the ``attention_partial`` stand-in for 12000 x 12000 scores took
the grading process to 2.4 GiB, and one asking ``rnn_lm_states`` for two million tokens held a batch
worker for most of a minute. So every such computation is

- **bounded before it starts**: its estimated size (the largest number of elements it holds at once,
  from the argument shapes) must stay within ``max_elements``, which is relative to the call being
  graded: ``max(MIN_ELEMENTS, RATIO * max(S, L * L))`` where S is the largest array argument of the graded
  call and L its longest axis (so attention over the call's own keys fits, with room to spare), and its
  estimated work within what the call's remaining CPU budget could buy at a generous rate;
- **charged to the call**: the CPU time the grader spent computing it counts against the call's CPU
  budget, beside the time the student's own process used.

Exceeding either is that call's failure (:class:`grader.checking.calls.StudentOverspent`, kind ``resources``),
named on the feedback page; the grader never computes the oversized reply. The same allowance bounds
the bytes a reply or a stand-in request may carry (``max_frame_bytes``), checked before they are read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MIN_ELEMENTS = 2**20  # 8 MiB of float64: every honest stand-in call of the course is far below this
RATIO = 4  # how much larger than the graded call's own attention-sized work a stand-in computation may be
# Work units a second of CPU may buy (a unit is one element operation; a Python-level loop step counts
# STEP_WORK): deliberately generous, so that no honest call is refused, while two million loop steps are.
WORK_PER_CPU_S = 2e9
STEP_WORK = 20_000
MIN_FRAME_BYTES = 64 * 2**20  # a reply or stand-in request may always carry this much
FRAME_RATIO = 16  # ... or this many times the bytes of the graded call's own arguments


def shape(value) -> tuple[int, ...] | None:
    """The shape of an array or tensor argument; None for anything else."""
    s = getattr(value, "shape", None)
    if s is None or not hasattr(value, "dtype"):
        return None
    try:
        return tuple(map(int, s))
    except (TypeError, ValueError):
        return None


def numel(value) -> int:
    """Elements of an array argument (1 for a scalar or anything else)."""
    s = shape(value)
    return math.prod(s) if s is not None else 1


def nbytes(value) -> int:
    """Bytes an argument takes when it crosses the boundary (arrays, and lists of them)."""
    if isinstance(value, (list, tuple)):
        return sum(nbytes(v) for v in value)
    return _leaf_bytes(value, shape(value))


def _leaf_bytes(value, s: tuple[int, ...] | None) -> int:
    if s is None:
        return 64
    itemsize = getattr(getattr(value, "dtype", None), "itemsize", 8)
    return math.prod(s) * int(itemsize if isinstance(itemsize, int) else 8)


@dataclass
class CallAllowance:
    """The grader's spending limits for one graded call (not shared between calls)."""

    max_elements: int
    cpu_s: float  # the call's CPU budget, shared with the student's own process
    max_frame_bytes: int
    spent_s: float = 0.0  # CPU seconds the grader spent on the call's behalf so far

    @classmethod
    def for_call(cls, args, cpu_s: float) -> "CallAllowance":
        """The allowance of a call on ``args`` with a CPU budget of ``cpu_s`` seconds."""
        largest = longest = 0
        size = 0  # nbytes(args), in the same pass over the leaves
        for a in flat(args):
            s = shape(a)
            size += _leaf_bytes(a, s)
            if s is not None:
                largest, longest = max(largest, math.prod(s)), max(longest, max(s, default=0))
        elements = max(MIN_ELEMENTS, RATIO * max(largest, longest * longest))
        frame = max(MIN_FRAME_BYTES, FRAME_RATIO * size)
        return cls(max_elements=elements, cpu_s=cpu_s, max_frame_bytes=frame)

    def refusal(self, name: str, elements: int, work: float) -> str | None:
        """Why a stand-in computation of this size is refused, or None when it may run."""
        if elements > self.max_elements:
            return (
                f"it asked the grader's {name} for a result holding about {_count(elements)} numbers, more than the "
                f"{_count(self.max_elements)} allowed for a call on these inputs"
            )
        left = max(self.cpu_s - self.spent_s, 0.0)
        if work > left * WORK_PER_CPU_S + STEP_WORK:
            return (
                f"it asked the grader's {name} for about {_count(int(work))} operations, more than its CPU budget of "
                f"{self.cpu_s:g} s allows"
            )
        return None

    def charge(self, seconds: float) -> None:
        self.spent_s += max(seconds, 0.0)

    @property
    def overspent(self) -> bool:
        return self.spent_s > self.cpu_s


def flat(args):
    """The leaves of nested lists and tuples (stand-in states such as merge's (s, v) pairs)."""
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from flat(a)
        else:
            yield a


def _count(n: int) -> str:
    return f"{n:,}" if n < 10**6 else f"{n / 10**6:,.1f} million"


__all__ = ["CallAllowance", "MIN_ELEMENTS", "RATIO", "STEP_WORK", "flat", "numel", "shape", "nbytes"]
