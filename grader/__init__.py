"""seqgrade's grader: sandboxed execution of student notebooks and property-based checks.

Layers, lowest first (a module may import only from layers below it; tests/test_layering.py checks,
and docs/architecture.md lists every module):
  0. version, errors, results, codec, calls, compare, ...  plain data, no student code
  1. strategies, standins, checks, assignments, registry   what is graded and how
  2. notebook, sandbox, backends                           getting student code to run somewhere safe
  3. grading                                               one notebook end to end
  4. batch, release, report, gradescope, demo, cli, ...    what users run
"""
import os as _os
import tempfile as _tempfile

# hypothesis keeps a cache in ./.hypothesis by default, even without an example database; graders run
# in course folders that must stay clean, so it goes to a per-user temporary folder instead.
_os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY",
                       _os.path.join(_tempfile.gettempdir(), f"seqgrade-hypothesis-{_os.getuid()}"))

from .version import __version__  # noqa: E402

__all__ = ["__version__"]
