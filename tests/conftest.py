"""Test-wide settings: hypothesis profiles (``ci`` is derandomized and loaded when CI is set), and a
store of drawn examples of the suite's own (grader.checks.drawn), shared by the processes it starts."""
import atexit
import os
import shutil
import tempfile

if "SEQGRADE_CACHE_DIR" not in os.environ:
    os.environ["SEQGRADE_CACHE_DIR"] = tempfile.mkdtemp(prefix="seqgrade-test-cache-")
    atexit.register(shutil.rmtree, os.environ["SEQGRADE_CACHE_DIR"], True)
# A grading server the developer left running must not answer the tests' `seqgrade grade` calls
# (tests/test_server.py starts servers of its own, at paths of its own).
os.environ.setdefault("SEQGRADE_SERVER", "off")

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=40,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def released(tmp_path_factory):
    """The student and solution versions of sequence_models, made once per test session."""
    from grader.release import release

    root = tmp_path_factory.mktemp("released")
    student = release("sequence_models", root / "student") / "sequence_models.ipynb"
    solution = release("sequence_models", root / "solution", solutions=True) / "sequence_models.ipynb"
    return student, solution


@pytest.fixture(scope="session")
def sandbox_grader():
    """One sandboxed Grader (one pre-loaded zygote) shared by the tests that grade whole notebooks."""
    from grader.grading import Grader
    from grader.sandbox.limits import Limits

    with Grader(Limits(call_timeout_s=5, cell_cpu_s=2, cell_timeout_s=5, submission_timeout_s=90), slot=11) as grader:
        yield grader
