"""The batch's own worker processes, started as soon as the submissions are known.

Each worker imports torch and the checks and starts its sandbox zygote (which imports torch too); the
parent imports the checks for the outputs. Done one after another, a small batch spends most of its time
waiting on those imports. So ``seqgrade batch`` starts the workers right after discovering the
submissions, before the parent imports anything heavy, and gives each a first task that only loads the
grader (``grader.batch.worker.warm_up``): the three imports then run side by side. Workers are started
only when some notebook needs grading (a rerun whose results are all reusable starts none).

Imports nothing heavy: it runs before torch is imported.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing
import os
from pathlib import Path

from grader.jail.limits import Limits

from .dispatch import Workers
from .identity import file_stem
from .worker import cache_key, warm_up


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def local_workers(n: int) -> Workers:
    """A pool of ``n`` spawned worker processes, replaced whenever one of them dies."""
    return Workers(make=lambda: cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn")))


def to_grade(jobs, assignment: str, limits: Limits, outdir: str | Path) -> int:
    """How many of ``jobs`` have no stored result for their notebook as it is now (what the batch will grade)."""
    count = 0
    for job in jobs:
        try:
            stored = json.loads((Path(outdir) / "results" / f"{file_stem(job.student)}.json").read_text(encoding="utf-8"))
            reusable = stored.get("cache_key") == cache_key(Path(job.path).read_bytes(), assignment, limits)
        except (OSError, ValueError, AttributeError):
            reusable = False
        count += not reusable
    return count


def started_workers(jobs, assignment: str, limits: Limits, outdir: str | Path, workers: int = 0,
                    backend: str = "sandbox") -> Workers | None:
    """A pool whose workers are already loading the grader (one warm-up task each, for as many workers as
    there are notebooks to grade), or None when nothing needs grading."""
    pending = to_grade(jobs, assignment, limits, outdir)
    if not pending:
        return None
    n = workers or default_workers()
    pool = local_workers(n)
    for _ in range(min(n, pending)):
        pool.submit(warm_up, limits, backend)
    return pool
