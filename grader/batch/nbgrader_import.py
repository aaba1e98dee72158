"""nbgrader imported once per process, in the background while a batch grades, and waited for before any
other code of the process imports it; the same thread then does other work of the batch's end ahead of time
(the similarity report), one thing after another, so two threads never import at once."""
from __future__ import annotations

import importlib
import os
import threading
from typing import Callable

_PREFETCHING: list[threading.Thread] = []


def prefetch_gradebook(then: Callable[[], None] | None = None) -> threading.Thread:
    """Import nbgrader's gradebook API in the background (about 2 s), while the batch grades, then run ``then``
    (its failure only loses the head start). Code in this process that imports nbgrader (or
    grader.course.release, which does), or uses what ``then`` prepares, calls :func:`nbgrader_imported` first."""
    thread = threading.Thread(target=_import_gently, args=("nbgrader.api", then), daemon=True)
    thread.start()
    _PREFETCHING.append(thread)
    return thread


def _import_gently(name: str, then: Callable[[], None] | None) -> None:
    """Import ``name`` in this thread at the lowest CPU priority (Linux gives each thread its own), so it
    takes only time the workers and their sandboxes leave: the gradebook is written last."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass
    importlib.import_module(name)
    if then is not None:
        try:
            then()
        except Exception:  # done again, in the foreground, where it is needed (and fails there with its reason)
            pass


def nbgrader_imported() -> None:
    """Wait for a background import of nbgrader (and what follows it) to finish: nbgrader's package imports
    itself in a circle, and a second thread importing any of it meanwhile gets a partially initialised module
    (ImportError)."""
    while _PREFETCHING:
        _PREFETCHING.pop().join()
