"""One CPU for a grading thread and its jail.

A grading thread and the jail it grades take turns: the grader sends a call and waits, the jail computes
and answers, and a stand-in's reply goes the other way, hundreds of times a notebook. When the two run on
different CPUs, each message wakes a process on another CPU, which costs an inter-processor interrupt (on a
virtual machine, an exit to the hypervisor). On the 2-core machine we measure on, a call carrying four small
tensors costs 118 us of the grader's CPU and 100 us of the jail's on one CPU, 142 and 125 on two
(benchmarks/round_trip.py). So while it grades a notebook, the grading thread keeps to one CPU, and the
zygote puts its jails on the same one: a jail runs where the thread that asks for it may run
(grader.sandbox.jails.Zygote.spawn, grader.jail.isolation.pin_cpus; every process of the jail inherits
it). Only where the work runs changes: CPU time is counted and limited as before, and a jail that keeps that
CPU busy slows its own grading, not the batch's other workers. A batch gives its workers different CPUs
(``cpu_for(index)``); a lone grader keeps to the CPU it is running on.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator


def allowed() -> list[int]:
    """The CPUs this thread may run on (empty where the system cannot say or pin)."""
    if not hasattr(os, "sched_getaffinity"):
        return []
    try:
        return sorted(os.sched_getaffinity(0))
    except OSError:
        return []


def current() -> int | None:
    """The CPU this thread runs on now (Linux: field 39 of /proc/thread-self/stat), or None."""
    try:
        with open("/proc/thread-self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[36])  # fields after the command name start at field 3
    except (OSError, IndexError, ValueError):
        return None


def cpu_for(index: int | None) -> int | None:
    """The CPU for the grader numbered ``index`` (a batch's workers: each its own while there are enough), or,
    with no index, the one this thread runs on; None where threads cannot be pinned here."""
    cpus = allowed()
    if len(cpus) < 2:
        return None  # one CPU (or none known): nothing to choose
    if index is None:
        here = current()
        return here if here in cpus else None
    return cpus[index % len(cpus)]


@contextmanager
def pinned(cpu: int | None) -> Iterator[None]:
    """Keep this thread on ``cpu`` for the body, then give it back the CPUs it had (nothing with None)."""
    if cpu is None:
        yield
        return
    try:
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {cpu})
    except (OSError, AttributeError):  # not allowed here: the grade runs wherever the system puts it
        yield
        return
    try:
        yield
    finally:
        try:
            os.sched_setaffinity(0, before)
        except OSError:
            pass
