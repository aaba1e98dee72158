"""Resource limits and isolation level for student processes (a frozen config with course defaults)."""

from __future__ import annotations

from dataclasses import dataclass, replace

ISOLATION_LEVELS = ("namespaces", "rlimits")


@dataclass(frozen=True)
class Limits:
    # One call of a student function is stopped when the sandbox's processes have used its CPU budget of
    # user time on it (measured from outside, so a loaded machine changes nothing), when they have
    # computed nothing for call_idle_s (every thread asleep: code that sleeps or deadlocks), or after the
    # wall-clock backstop call_timeout_s. call_cpu_s is every function's budget, at least: honest calls
    # use at most 4.1 ms except tiled_attention's 12 ms (every solution and alternative of the four
    # assignments, measured by benchmarks/call_cpu.py), so a student's answer may be more than twenty
    # times slower than the slowest of them; a function whose honest calls are heavier declares its own
    # budget (Exercise.call_cpu_s). The calls whose memory is measured run attention over 4096 x 4096
    # scores (90 ms of user time honest, a naive version several times that) and get large_call_cpu_s,
    # so a slow but correct answer fails on memory, not time.
    call_cpu_s: float = 0.1
    large_call_cpu_s: float = 2.0
    # A function's first call that runs over its budget while loading code from disk (an import) may use
    # this much CPU once, and is then repeated warm under its ordinary budget (grader.sandbox.warmup).
    warmup_cpu_s: float = 1.0
    # A call whose memory grows fast as it runs over its budget may use this much CPU, so that code that
    # fills its memory meets memory_mb rather than a budget that memory traffic eats (grader.sandbox.budget).
    hoard_cpu_s: float = 1.0
    call_idle_s: float = 1.0  # a call whose processes all wait (none running) this long is stopped: it sleeps
    call_timeout_s: float = 10.0  # wall-clock backstop of one call (code that alternates short sleeps and work)
    cell_cpu_s: float = 10.0  # CPU seconds of one notebook cell, measured from outside
    cell_timeout_s: float = 30.0  # how long a cell may wait without computing (nbgrader's cell timeout)
    submission_timeout_s: float = 180.0  # wall clock for one notebook: cells and every check
    cpu_s: int = 120  # CPU seconds of one student process (RLIMIT_CPU)
    memory_mb: int = 1024  # address space one student process may add to what numpy and torch already map (RLIMIT_AS)
    total_memory_mb: int = 3072  # resident memory of all the submission's processes together (cgroup, where available)
    nproc: int = 32  # processes and threads of the sandbox user (RLIMIT_NPROC) / pids in the cgroup
    file_size_mb: int = 16  # largest file the student may write (RLIMIT_FSIZE)
    scratch_mb: int = 64  # size of the writable scratch directory (tmpfs)
    open_files: int = 256  # RLIMIT_NOFILE
    isolation: str = "namespaces"  # or "rlimits": no namespaces, only for machines that cannot do better

    def __post_init__(self):
        if self.isolation not in ISOLATION_LEVELS:
            raise ValueError(f"isolation must be one of {ISOLATION_LEVELS}; got {self.isolation!r}")
        for name in (
            "call_cpu_s",
            "large_call_cpu_s",
            "warmup_cpu_s",
            "hoard_cpu_s",
            "call_idle_s",
            "call_timeout_s",
            "cell_cpu_s",
            "cell_timeout_s",
            "submission_timeout_s",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive; got {getattr(self, name)!r}")
        for name in ("cpu_s", "memory_mb", "total_memory_mb", "nproc", "file_size_mb", "scratch_mb", "open_files"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive; got {getattr(self, name)!r}")

    def call_budget(self, declared: float | None) -> float:
        """CPU seconds one call may use: a function's declared budget, never less than call_cpu_s and
        never more than the whole notebook's time."""
        if declared is None:
            return self.call_cpu_s
        return min(max(self.call_cpu_s, declared), self.submission_timeout_s)

    def with_timeout(self, seconds: float | None) -> "Limits":
        """Scale the wall-clock limits so that one notebook takes at most ``seconds``."""
        if seconds is None:
            return self
        return replace(
            self,
            submission_timeout_s=seconds,
            cell_timeout_s=min(self.cell_timeout_s, seconds),
            call_timeout_s=min(self.call_timeout_s, seconds),
            call_cpu_s=min(self.call_cpu_s, seconds),
            call_idle_s=min(self.call_idle_s, seconds),
            warmup_cpu_s=min(self.warmup_cpu_s, seconds),
            hoard_cpu_s=min(self.hoard_cpu_s, seconds),
            large_call_cpu_s=min(self.large_call_cpu_s, seconds),
            cell_cpu_s=min(self.cell_cpu_s, seconds),
        )
