"""The batch's own worker processes: how many, and the pool that replaces any that dies.

Imports nothing heavy: the batch's own process imports no torch (it reads the assignment's outline,
grader.assignments.outline); its workers do, each when it is given its first notebook.
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os

from .dispatch import Workers
from .worker import exit_quickly


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def local_workers(n: int) -> Workers:
    """A pool of ``n`` spawned worker processes, replaced whenever one of them dies (a process is started
    when a notebook is handed to the pool and none is idle, so a batch that reuses every result starts none)."""
    return Workers(make=lambda: cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"),
                                                       initializer=exit_quickly))
