"""The CPU budget of one call as the grader applies it, and the two ways it stretches, each bounded.

- **One-time work** (grader.sandbox.warmup): a function's first call that runs over its budget while the
  jail reads files (an import) may use ``Limits.warmup_cpu_s`` once, and is then judged on a second call, warm.
- **Filling memory**: a call that runs over its budget while its processes hold at least ``HOARD_MB_PER_CPU_S``
  per CPU second it used (and ``HOARD_MIN_MB``) more than they held when the notebook's cells had run may use
  ``Limits.hoard_cpu_s``, and is judged as it ends. (Measured from that point, not from the call's start: the
  grader first reads the jail's usage some milliseconds into a call, later on a loaded machine, by when a call
  may have filled hundreds of MiB.) Writing fresh memory costs user time that grows with the machine's memory traffic:
  a loop that fills the 1 GiB allowance took 30-90 ms of user time on a quiet machine and over the 0.1 s
  budget on a busy one, so without the stretch the same code ended "out of memory" on one run and "out of
  time" on another. With it, such a call meets the memory limit first wherever it runs. Code that only
  computes grows no memory and keeps its ordinary budget; a call that grows then spins is stopped at the
  stretched budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from .warmup import READ_BYTES, tree_read_bytes

HOARD_MB_PER_CPU_S = 1024  # writing 1 GiB takes about 0.1 s of user time here: growth ten times slower counts
HOARD_MIN_MB = 64


@dataclass
class CallClock:
    """The CPU budget of one call (mutable, one per call)."""

    budget: float
    warmup_s: float  # what the budget may stretch to once for one-time work (0: no such stretch for this call)
    hoard_s: float = 0.0  # what it may stretch to for a call that fills memory (0: none)
    since_cpu: float | None = None  # the jail's CPU time when the call began to take a while
    since_read: int | None = None  # and the bytes it had read before the call
    stretched: bool = False  # for one-time work: the call is made again, warm, and that one is judged
    hoarding: bool = False

    def arm(self, pgid: int | None) -> "CallClock":
        """Note what the jail has read before a call that may stretch (before it is sent: an import takes
        a millisecond, long before the budget is first checked)."""
        if self.warmup_s > self.budget and pgid:
            self.since_read = tree_read_bytes(pgid)
        return self

    def start(self, cpu: float) -> None:
        self.since_cpu = cpu

    def over(self, used: float, pgid: int, grown_mb: float = 0.0) -> bool:
        """Whether ``used`` CPU seconds (the jail's, plus the grader's on the call's behalf, since the call
        began) are over the budget, stretching it once for a first call that loads code or for a call that
        fills memory (``grown_mb``: what the jail holds now beyond what it held when its cells had run)."""
        if used <= self.budget:
            return False
        if self.stretched or self.hoarding:
            return True
        if self.since_read is not None and tree_read_bytes(pgid) - self.since_read >= READ_BYTES:
            self.budget, self.stretched = self.warmup_s, True
        elif self.hoard_s > self.budget and grown_mb >= max(HOARD_MIN_MB, HOARD_MB_PER_CPU_S * used):
            self.budget, self.hoarding = self.hoard_s, True
        return used > self.budget
