"""The function a worker process runs for one submission. Each worker process keeps one Grader for all
the submissions it is given, with a pre-loaded sandbox zygote of its own, or the one the batch's own
workers share (grader.batch.pool). Works the same in a local process pool and in a Dask worker: only
plain data goes in and comes out."""

from __future__ import annotations

import atexit
import hashlib
import os
from dataclasses import asdict

from grader.errors import SandboxError
from grader.jail.limits import Limits
from grader.version import __version__

_GRADER = None
_GRADER_KEY = None
_SHARED_ZYGOTE = None  # the control socket of the batch's own zygote, which serves all its local workers
_CPU_INDEX = None  # this worker's number in its pool: which CPU it grades on (grader.sandbox.cpus.cpu_for)


def cache_key(notebook_bytes: bytes, assignment: str, limits: Limits) -> str:
    h = hashlib.sha256()
    for part in (
        notebook_bytes,
        assignment.encode(),
        __version__.encode(),
        repr(sorted(asdict(limits).items())).encode(),
    ):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def start_worker(environ: dict | None = None, shared_zygote=None, numbering=None) -> None:
    """Run in each of the batch's own worker processes as it starts (grader.batch.pool; not in a Dask worker).
    Such a worker is forked from a forkserver and ends with os._exit (no exit handler runs, and torch's modules
    are not torn down one by one).

    - ``environ``: the batch's environment now (a forked worker has the forkserver's, from when it started).
    - ``shared_zygote``: the control socket of the zygote the batch started for all its workers, so that
      each worker does not start (and import torch in) one of its own; None: each starts its own.
    - ``numbering``: a shared counter (multiprocessing.Value) that gives each worker of the pool its own
      number, so that the workers grade on different CPUs (grader.sandbox.cpus); None: each grades on the
      CPU it runs on."""
    global _SHARED_ZYGOTE, _CPU_INDEX
    if environ is not None:
        os.environ.clear()
        os.environ.update(environ)
    _SHARED_ZYGOTE = shared_zygote
    if numbering is not None:
        with numbering.get_lock():
            _CPU_INDEX, numbering.value = numbering.value, numbering.value + 1


def _grader(limits: Limits, hide: tuple[str, ...], backend: str, renew: bool = False):
    global _GRADER, _GRADER_KEY
    key = (limits, backend)
    if _GRADER is None or _GRADER_KEY != key or renew:
        launched = None
        shared = _SHARED_ZYGOTE if backend == "sandbox" else None
        if backend == "sandbox" and shared is None:  # a zygote of its own, importing torch while this process does
            from grader.sandbox.launch import launch_zygote

            launched = launch_zygote()
        from grader.collector import imports_uncollected

        with imports_uncollected():
            import torch

            from grader.grading import Grader

        torch.set_num_threads(1)  # one worker per core: the checks' own torch work stays on this worker's core
        if _GRADER is not None:
            _GRADER.close()
        _GRADER = Grader(
            limits, backend=backend, hide=hide, launched=launched, shared_zygote=shared, cpu_index=_CPU_INDEX
        )
        _GRADER_KEY = key
        atexit.register(_GRADER.close)
    _GRADER.set_hidden(hide)
    return _GRADER


def grade_job(
    student: str, path: str, assignment: str, limits: Limits, hide: tuple[str, ...], backend: str = "sandbox"
) -> dict:
    """Grade one notebook; return {"student", "result" (the result as a dict), "error"}."""
    global _SHARED_ZYGOTE
    try:
        grader = _grader(limits, hide, backend)
        try:
            result = grader.grade(path, assignment, display_name=os.path.basename(path))
        except SandboxError:
            if not grader.zygote_gone() or _SHARED_ZYGOTE is None:
                raise
            # The batch's zygote ended (a student's process must not be able to end it; if one did, or it
            # was killed): this worker starts one of its own and grades the notebook again from the start.
            _SHARED_ZYGOTE = None
            result = _grader(limits, hide, backend, renew=True).grade(
                path, assignment, display_name=os.path.basename(path)
            )
        return {"student": student, "result": result.to_dict(), "error": None}
    except Exception as exc:  # the grader's own failure: recorded, never stops the batch
        return {"student": student, "result": None, "error": f"{type(exc).__name__}: {exc}"}
