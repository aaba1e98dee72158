"""seqgrade's grader: sandboxed execution of student notebooks and property-based checks.

Layers, lowest first (a module may import only from its own layer and those below it;
tests/test_layering.py checks, and docs/architecture.md says what each package holds):
  0. jail, version, errors, results, fsutil, collector   the student's process (jail) and plain data
  1. checking                                             the check machinery: cases, probes, comparison, charging
  2. assignments                                          the course: one package per assignment, and the registry
  3. notebook, sandbox, judge                             reading notebooks, running student code, judging one exercise
  4. grading                                              one notebook end to end
  5. report                                               pages and summaries
  6. batch, course, gradescope, server, audit, cli, ...   what users run
"""

import os as _os
import tempfile as _tempfile

# hypothesis keeps a cache in ./.hypothesis by default, even without an example database; graders run
# in course folders that must stay clean, so it goes to a per-user temporary folder instead.
_os.environ.setdefault(
    "HYPOTHESIS_STORAGE_DIRECTORY", _os.path.join(_tempfile.gettempdir(), f"seqgrade-hypothesis-{_os.getuid()}")
)
# Nothing else here: grader.jail runs this file in the student's process, which must load nothing else of
# the grader (tests/test_layering.py). The version is grader.version.__version__.
