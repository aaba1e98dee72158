"""A module of an installed package imported without running the package's ``__init__``.

Some packages' ``__init__`` imports far more than the one module a batch needs from them: copydetect's
imports matplotlib, jinja2 and tqdm for a report seqgrade never makes; nbgrader's imports its Jupyter
server extensions (tornado, jupyter_server, the exchange) when the batch only writes a gradebook. Such a
module is imported here from the package's own folder under a package name of our own,
``_seqgrade_<package>``, whose ``__init__`` runs nothing: the same files, so the same code, and the
package's relative imports stay inside that name (the package's real name is never half-imported).
Where the package itself was imported already, its own module is used.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType

_LOCK = threading.Lock()


def private_name(package: str) -> str:
    return f"_seqgrade_{package}"


def without_package_init(package: str, module: str) -> ModuleType:
    """``package.module``: the package's own when ``package`` is imported already, else imported once per
    process under :func:`private_name` (ImportError when the package is not installed)."""
    if package in sys.modules:
        return importlib.import_module(f"{package}.{module}")
    private = private_name(package)
    with _LOCK:
        if private not in sys.modules:
            found = importlib.util.find_spec(package)  # finds the package's folder without running it
            if found is None or not found.submodule_search_locations:
                raise ImportError(f"{package} is not installed")
            shell = ModuleType(private, f"{package}'s modules, without its __init__ (grader.batch.bare_import)")
            shell.__path__ = list(found.submodule_search_locations)
            shell.__package__ = private
            sys.modules[private] = shell
        return importlib.import_module(f"{private}.{module}")
