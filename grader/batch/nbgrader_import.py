"""nbgrader imported once per process, in the background while a batch grades, and waited for before any
other code of the process imports it."""
from __future__ import annotations

import importlib
import threading

_PREFETCHING: list[threading.Thread] = []


def prefetch_gradebook() -> threading.Thread:
    """Import nbgrader's gradebook API in the background (about 2 s), while the batch grades. Code in this
    process that imports nbgrader (or grader.course.release, which does) calls :func:`nbgrader_imported` first."""
    thread = threading.Thread(target=importlib.import_module, args=("nbgrader.api",), daemon=True)
    thread.start()
    _PREFETCHING.append(thread)
    return thread


def nbgrader_imported() -> None:
    """Wait for a background import of nbgrader to finish: nbgrader's package imports itself in a circle,
    and a second thread importing any of it meanwhile gets a partially initialised module (ImportError)."""
    while _PREFETCHING:
        _PREFETCHING.pop().join()
