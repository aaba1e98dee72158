"""The function a worker process runs for one submission. Each worker process keeps one Grader
(and so one pre-loaded sandbox zygote) for all the submissions it is given. Works the same in a local
process pool and in a Dask worker: only plain data goes in and comes out."""
from __future__ import annotations

import atexit
import hashlib
import os
from dataclasses import asdict

from grader.jail.limits import Limits
from grader.version import __version__

_GRADER = None
_GRADER_KEY = None


def cache_key(notebook_bytes: bytes, assignment: str, limits: Limits) -> str:
    h = hashlib.sha256()
    for part in (notebook_bytes, assignment.encode(), __version__.encode(), repr(sorted(asdict(limits).items())).encode()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def exit_quickly() -> None:
    """Run in each of the batch's own worker processes as it starts (not in a Dask worker, whose own exit
    handlers must run): when the process exits, its last exit handler (registered first, so run last, after
    the grader's own, which closes its sandbox) flushes and ends it without tearing torch's modules down one
    by one, about 0.7 s of CPU, which the batch's end would otherwise wait for."""
    from grader.collector import end_process

    atexit.register(end_process, 0)


def _grader(limits: Limits, hide: tuple[str, ...], backend: str):
    global _GRADER, _GRADER_KEY
    key = (limits, backend)
    if _GRADER is None or _GRADER_KEY != key:
        launched = None
        if backend == "sandbox":  # the zygote imports torch in its own process while this one imports the checks
            from grader.sandbox.launch import launch_zygote

            launched = launch_zygote()
        from grader.collector import imports_uncollected

        with imports_uncollected():
            import torch

            from grader.grading import Grader

        torch.set_num_threads(1)  # one worker per core: the checks' own torch work stays on this worker's core
        if _GRADER is not None:
            _GRADER.close()
        _GRADER = Grader(limits, backend=backend, slot=os.getpid() % 5000, hide=hide, launched=launched)
        _GRADER_KEY = key
        atexit.register(_GRADER.close)
    _GRADER.set_hidden(hide)
    return _GRADER


def grade_job(student: str, path: str, assignment: str, limits: Limits, hide: tuple[str, ...], backend: str = "sandbox") -> dict:
    """Grade one notebook; return {"student", "result" (the result as a dict), "error"}."""
    try:
        result = _grader(limits, hide, backend).grade(path, assignment, display_name=os.path.basename(path))
        return {"student": student, "result": result.to_dict(), "error": None}
    except Exception as exc:  # the grader's own failure: recorded, never stops the batch
        return {"student": student, "result": None, "error": f"{type(exc).__name__}: {exc}"}
