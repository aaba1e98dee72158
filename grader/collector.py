"""Start-up imports without the cyclic garbage collector.

Importing torch, numpy and the checks creates about 260,000 objects that live as long as the process.
While they are imported the collector keeps running, and each of its full passes walks all of them: on
the 2-core machine we measure on, that is a quarter of a second of a `seqgrade grade` (three full and
thirty partial passes), for the roughly 7,000 objects of garbage those imports leave. So start-up code
imports with the collector off, then freezes what it imported (moves it where no later pass looks) and
turns the collector back on: student code and the checks run with it on, as always.

Some installed packages are imported by others although nothing seqgrade does needs them: jsonschema
imports ``rfc3987_syntax`` when it is installed (jupyter-events, a dependency of nbgrader, installs it) to
check the "iri" string format, and that import builds a parser: 1.2-2.1 s of CPU, more than importing torch,
paid by every process that imports nbformat or nbgrader. No notebook or gradebook schema uses that format,
so seqgrade's processes mark such modules as absent before importing anything (``skip_unused_imports``);
jsonschema then leaves that format unchecked, as it does where the package is not installed.

At the other end, a finished process need not tear down what it imported (``end_process``).
"""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager

UNUSED_MODULES = ("rfc3987_syntax",)


def skip_unused_imports() -> None:
    """Make ``import`` of each module of UNUSED_MODULES fail (ImportError) in this process, unless it is
    already imported: the packages that import them optionally then do without."""
    for name in UNUSED_MODULES:
        sys.modules.setdefault(name, None)


@contextmanager
def imports_uncollected():
    """Run the body (imports) with the collector off; afterwards freeze what exists and restore it."""
    skip_unused_imports()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def end_process(code: int) -> None:
    """Flush the standard streams and end the process now, without tearing its modules down one by one
    (torch's alone cost about 0.7 s of CPU, and a finished process needs none of it). Callers run the exit
    handlers first, or call this from the last of them."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
