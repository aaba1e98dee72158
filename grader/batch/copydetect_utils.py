"""copydetect's tokenizer and winnowing (``copydetect.utils``) without the rest of copydetect.

``import copydetect.utils`` first runs the package's ``__init__``, which imports its detector and, with it,
``matplotlib.pyplot``, jinja2 and tqdm for copydetect's own HTML report, which seqgrade never makes: about
0.45 s of CPU of the 0.6 s the import costs, paid by every batch of more than one notebook. ``utils`` itself
imports only Pygments, numpy, markupsafe and copydetect's winnowing (``.winnow``, or ``.pywinnow``), so it is
imported without it (grader.batch.bare_import): the same files, and copydetect's own ``__init__`` never
runs. Where copydetect was imported already, its module is used.
"""

from __future__ import annotations

from types import ModuleType

from .bare_import import without_package_init


def copydetect_utils() -> ModuleType:
    """The module ``copydetect.utils``, imported once per process without running copydetect's ``__init__``."""
    return without_package_init("copydetect", "utils")
