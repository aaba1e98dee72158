"""copydetect's tokenizer and winnowing (``copydetect.utils``) without the rest of copydetect.

``import copydetect.utils`` first runs the package's ``__init__``, which imports its detector and, with it,
``matplotlib.pyplot``, jinja2 and tqdm for copydetect's own HTML report, which seqgrade never makes: about
0.45 s of CPU of the 0.6 s the import costs, paid by every batch of more than one notebook. ``utils`` itself
imports only Pygments, numpy, markupsafe and copydetect's winnowing (``.winnow``, or ``.pywinnow``), so it is
imported here from copydetect's folder under a package name of our own whose ``__init__`` is empty: the same
files, and copydetect's own ``__init__`` never runs. Where copydetect was imported already, its module is used.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType

PACKAGE = "_seqgrade_copydetect"  # copydetect's folder, as a package that runs nothing when imported
_LOCK = threading.Lock()


def copydetect_utils() -> ModuleType:
    """The module ``copydetect.utils``, imported once per process without running copydetect's ``__init__``."""
    if "copydetect.utils" in sys.modules:
        return sys.modules["copydetect.utils"]
    with _LOCK:
        if PACKAGE not in sys.modules:
            found = importlib.util.find_spec("copydetect")  # finds the package without running it
            if found is None or not found.submodule_search_locations:
                raise ImportError("copydetect is not installed")
            package = ModuleType(PACKAGE, "copydetect's modules, without its __init__ (grader.batch.copydetect_utils)")
            package.__path__ = list(found.submodule_search_locations)
            package.__package__ = PACKAGE
            sys.modules[PACKAGE] = package
        return importlib.import_module(f"{PACKAGE}.utils")
