"""The batch's own worker processes: how many, the pool that replaces any that dies, and the sandbox
zygote they share.

Imports nothing heavy: the batch's own process imports no torch (it reads the assignment's outline,
grader.assignments.outline). Its workers are forked from one forkserver process that imports torch and
the grading code once for all of them (grader.batch.preload, and the assignment's checks), and they ask
one zygote for their jails (:class:`SharedZygote`), so a batch of two workers imports torch twice (the
forkserver, the zygote), not four times.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import socket

from .dispatch import Workers
from .worker import start_worker


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


class SharedZygote:
    """The zygote the batch's own workers share, started with the first of them (a batch that reuses every
    result starts none). A worker that finds it gone starts one of its own (grader.batch.worker)."""

    def __init__(self):
        self._zygote = None
        self._unavailable = False

    def control(self) -> socket.socket | None:
        """The control socket each worker gets a copy of (SOCK_SEQPACKET: one message per request); None where
        this system has no such sockets (each worker then starts its own zygote)."""
        if self._zygote is None and not self._unavailable:
            from grader.sandbox.jails import Zygote
            from grader.sandbox.launch import launch_zygote

            try:
                self._zygote = Zygote(launched=launch_zygote(shared=True))
            except OSError:  # no SOCK_SEQPACKET for Unix sockets here
                self._unavailable = True
        return self._zygote.control if self._zygote is not None else None

    def wait_ready(self) -> None:
        """Return once it has started, or raise SandboxError with its own words (then nothing can be graded)."""
        if self._zygote is not None:
            self._zygote.wait_ready()

    def close(self) -> None:
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None


def _forkserver(assignment: str | None):
    """The forkserver context, with what its server imports for the workers (set before it starts)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(
        ["grader.batch.preload"] + ([f"grader.assignments.{assignment}"] if assignment else [])
    )
    return context


def start_early(assignment: str) -> SharedZygote:
    """Start the workers' forkserver (its imports take a second) and the shared zygote now, before the batch's
    own process does the rest of its start-up: for a batch that will grade notebooks (nothing to reuse)."""
    from multiprocessing import forkserver

    _forkserver(assignment)
    forkserver.ensure_running()
    zygote = SharedZygote()
    zygote.control()
    return zygote


def local_workers(n: int, assignment: str | None = None, zygote: SharedZygote | None = None) -> Workers:
    """A pool of ``n`` worker processes, replaced whenever one of them dies (a process is started when a
    notebook is handed to the pool and none is idle). ``assignment``: its checks are imported by the
    forkserver too. ``zygote``: the one every worker asks for jails (None: each starts its own).

    Each worker takes this process's environment as it is when the pool is made (a forked worker would
    otherwise have the forkserver's, from when it started), and a number of its own in the pool: the workers
    grade on different CPUs, each with its jails (grader.sandbox.cpus)."""
    context = _forkserver(assignment)
    return Workers(
        make=lambda: cf.ProcessPoolExecutor(
            n,
            mp_context=context,
            initializer=start_worker,
            initargs=(dict(os.environ), zygote.control() if zygote else None, context.Value("i", 0)),
        )
    )
