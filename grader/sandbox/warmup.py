"""One-time work never fails correct code: a function's first call may load code from disk.

A correct ``scaled_dot_product_attention`` that calls ``torch.broadcast_shapes`` makes torch import sympy
on its first call: 0.2-0.6 s of CPU and some 16 MB of files read, against a call budget of 0.1 s. So the
first time a function's call runs over its CPU budget *while the jail has been reading files* (at least
``READ_BYTES`` since the call began: an import, or data loaded lazily), the budget stretches once to
``Limits.warmup_cpu_s``; if the call then returns, it is made again, warm, under the ordinary budget,
and the second call is the one judged. Code that only computes reads nothing, so a loop that never ends
still costs one ordinary budget. The allowance belongs to each callable once per notebook process
(:func:`callable_key`): a function, a class's construction, and each method of the class's objects, so the
one-time work a ``forward`` does on its first call is allowed even though the class was constructed first.

What the jail read is taken from ``/proc/PID/io`` (``rchar``) by the grader, outside the jail.
"""

from __future__ import annotations

from dataclasses import dataclass

from .procfs import tree_pids

READ_BYTES = 64 * 1024  # an import reads .pyc files; sympy's is 16 MB


def tree_read_bytes(root: int) -> int:
    """Bytes read through read() calls by process ``root`` and its descendants (``rchar`` in /proc)."""
    total = 0
    for pid in tree_pids(root):
        try:
            with open(f"/proc/{pid}/io") as f:
                for line in f:
                    if line.startswith("rchar:"):
                        total += int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            continue
    return total


def callable_key(name: str, op: str = "call", handle: str | None = None, method: str | None = None) -> str:
    """What a first-call allowance belongs to: function ``name``, the construction of class ``name``
    (``name()``), or one method of its objects (``name.forward``; the same for every object of the class,
    which shares its code and so its one-time work)."""
    if op == "construct":
        return f"{name}()"
    if handle is None:
        return name
    return f"{name}.{method or '__call__'}" if op == "call" else f"{name}.{op}"


@dataclass
class CallClock:
    """The CPU budget of one call as the grader applies it (mutable, one per call)."""

    budget: float
    warmup_s: float  # what the budget may stretch to once (0: no stretch for this call)
    since_cpu: float | None = None  # the jail's CPU time when the call began to take a while
    since_read: int | None = None  # and the bytes it had read by then
    stretched: bool = False

    def arm(self, pgid: int | None) -> "CallClock":
        """Note what the jail has read before a call that may stretch (before it is sent: an import takes
        a millisecond, long before the budget is first checked)."""
        if self.warmup_s > self.budget and pgid:
            self.since_read = tree_read_bytes(pgid)
        return self

    def start(self, cpu: float) -> None:
        self.since_cpu = cpu

    def over(self, used: float, pgid: int) -> bool:
        """Whether ``used`` CPU seconds (the jail's, plus the grader's on the call's behalf, since the call
        began) are over the budget, stretching it once for a first call that loads code."""
        if used <= self.budget:
            return False
        if not self.stretched and self.since_read is not None and tree_read_bytes(pgid) - self.since_read >= READ_BYTES:
            self.budget, self.stretched = self.warmup_s, True
            return used > self.budget
        return True
