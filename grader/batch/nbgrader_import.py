"""nbgrader imported once per process, in the background while a batch grades, and waited for before any
other code of the process imports it."""
from __future__ import annotations

import importlib
import os
import threading

_PREFETCHING: list[threading.Thread] = []


def prefetch_gradebook() -> threading.Thread:
    """Import nbgrader's gradebook API in the background (about 2 s), while the batch grades. Code in this
    process that imports nbgrader (or grader.course.release, which does) calls :func:`nbgrader_imported` first."""
    thread = threading.Thread(target=_import_gently, args=("nbgrader.api",), daemon=True)
    thread.start()
    _PREFETCHING.append(thread)
    return thread


def _import_gently(name: str) -> None:
    """Import ``name`` in this thread at the lowest CPU priority (Linux gives each thread its own), so it
    takes only time the workers and their sandboxes leave: the gradebook is written last."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass
    importlib.import_module(name)


def nbgrader_imported() -> None:
    """Wait for a background import of nbgrader to finish: nbgrader's package imports itself in a circle,
    and a second thread importing any of it meanwhile gets a partially initialised module (ImportError)."""
    while _PREFETCHING:
        _PREFETCHING.pop().join()
