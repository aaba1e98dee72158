"""Start-up imports without the cyclic garbage collector.

Importing torch, numpy and the checks creates about 260,000 objects that live as long as the process.
While they are imported the collector keeps running, and each of its full passes walks all of them: on
the 2-core machine we measure on, that is a quarter of a second of a `seqgrade grade` (three full and
thirty partial passes), for the roughly 7,000 objects of garbage those imports leave. So start-up code
imports with the collector off, then freezes what it imported (moves it where no later pass looks) and
turns the collector back on: student code and the checks run with it on, as always.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def imports_uncollected():
    """Run the body (imports) with the collector off; afterwards freeze what exists and restore it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
