"""Measuring a whole command from outside: wall time, CPU seconds of every process it starts, peak memory.

CPU comes from a cpuacct cgroup of the command's own where this runs as root with cgroup v1 (worker
pools and sandbox zygotes that nobody waits for are counted too); elsewhere from rusage of waited-for
children, which misses them (``Measured.cpu_source`` says which).
"""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Measured:
    wall_s: float
    cpu_s: float
    cpu_source: str  # "cgroup" or "rusage"
    peak_mb: float  # summed PSS of the process tree, sampled (0 when not sampled)
    returncode: int
    stdout: str
    stderr: str


def tree_pss_mb(pid: int) -> float:
    """Memory of a process and all its descendants now: the sum of their proportional set sizes (PSS),
    so pages that forked children share with their parent (torch, numpy) are counted once."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("Pss:")) * 1024
        except (OSError, StopIteration, ValueError):
            pass
        stack.extend(children.get(p, []))
    return total / 2**20


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _make_group() -> Path | None:
    group = Path(f"/sys/fs/cgroup/cpuacct/seqgrade-bench-{os.getpid()}-{time.monotonic_ns()}")
    try:
        group.mkdir()
        return group
    except OSError:
        return None


def _remove_group(group: Path) -> None:
    for _ in range(100):
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.1)


def measure(command: list[str], *, sample_memory: bool = False, **popen) -> Measured:
    """Run ``command`` to its end and measure it (see the module's docstring)."""
    group = _make_group()
    before = _children_cpu()
    preexec = (lambda: (group / "cgroup.procs").write_text(str(os.getpid()))) if group else None
    peak = [0.0]
    stop = threading.Event()
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec, **popen
        )

        def sample() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], tree_pss_mb(proc.pid))
                stop.wait(0.5)  # smaps_rollup walks page tables: sampling often would slow what it measures

        sampler = threading.Thread(target=sample, daemon=True) if sample_memory else None
        if sampler:
            sampler.start()
        out, err = proc.communicate()
        wall = time.perf_counter() - start
        stop.set()
        if sampler:
            sampler.join()
        if group:
            time.sleep(0.2)  # processes killed as the command exits are accounted once they are gone
            cpu, source = int((group / "cpuacct.usage").read_text()) / 1e9, "cgroup"
        else:
            cpu, source = _children_cpu() - before, "rusage"
        return Measured(wall, cpu, source, peak[0], proc.returncode, out, err)
    finally:
        if group:
            _remove_group(group)


def cpu_seconds(command: list[str]) -> float:
    """CPU seconds of ``command`` and every process it starts; raises if the command fails."""
    m = measure(command)
    if m.returncode != 0:
        raise subprocess.CalledProcessError(m.returncode, command, m.stdout, m.stderr)
    return m.cpu_s
