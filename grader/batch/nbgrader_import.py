"""nbgrader imported once per process, in the background while a batch grades, and waited for before any
other code of the process imports it; the same thread then does other work of the batch's end ahead of time
(the similarity report). What that work imports is imported in the same import phase, before anything else
in the process may import again, so two threads never import at once; the work itself may then run beside
the main thread's own (the gradebook's writes wait on the disk most of their time).

What a batch uses of nbgrader is its gradebook API (``nbgrader.api``), imported without nbgrader's package
``__init__`` (grader.batch.bare_import), which imports nbgrader's Jupyter server extensions: 0.45 s of CPU
instead of 0.8-0.9 s."""

from __future__ import annotations

import functools
import os
import threading
from types import ModuleType
from typing import Callable, Sequence

from .bare_import import without_package_init

_PREFETCHING: list[tuple[threading.Thread, threading.Event]] = []


@functools.cache
def nbgrader_api() -> ModuleType:
    """nbgrader's gradebook API (the module ``nbgrader.api``), the same module object for the whole process:
    nbgrader's own when nbgrader was imported first, else the same file imported without nbgrader's
    ``__init__``. Call :func:`nbgrader_imported` first where a background import may be under way."""
    return without_package_init("nbgrader", "api")


def prefetch_gradebook(
    then: Callable[[], None] | None = None, warm: Sequence[Callable[[], None]] = ()
) -> threading.Thread:
    """Import nbgrader's gradebook API in the background (about half a second of CPU), while the batch grades,
    then run each of ``warm`` (what may import, or use nbgrader: done before anything else of the process may),
    then ``then`` (a failure of any only loses the head start). Code in this process that imports nbgrader (or
    grader.course.release, which does) calls :func:`nbgrader_imported` first, and code that uses what ``then``
    prepares calls :func:`background_done`."""
    imported = threading.Event()
    thread = threading.Thread(target=_import_gently, args=(imported, warm, then), daemon=True)
    thread.start()
    _PREFETCHING.append((thread, imported))
    return thread


def _import_gently(
    imported: threading.Event, warm: Sequence[Callable[[], None]], then: Callable[[], None] | None
) -> None:
    """Import nbgrader's gradebook API in this thread at the lowest CPU priority (Linux gives each thread its
    own), so it takes only time the workers and their sandboxes leave: the gradebook is written last."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass
    try:
        nbgrader_api()
        for step in warm:
            try:
                step()
            except Exception:  # done again where it is needed (and fails there with its reason)
                pass
    except Exception:  # imported again where it is needed (and fails there with its reason)
        pass
    finally:
        imported.set()
    if then is not None:
        try:
            then()
        except Exception:  # done again, in the foreground, where it is needed (and fails there with its reason)
            pass


def nbgrader_imported() -> None:
    """Wait for a background import of nbgrader (and of what the work after it imports) to finish: nbgrader's
    package imports itself in a circle, and a second thread importing any of it meanwhile gets a partially
    initialised module (ImportError)."""
    for thread, imported in list(_PREFETCHING):
        if thread is not threading.current_thread():  # the thread's own steps (``warm``) do not wait for themselves
            imported.wait()


def background_done() -> None:
    """Wait for the background thread's work too (the similarity report it writes)."""
    while _PREFETCHING:
        _PREFETCHING.pop()[0].join()
