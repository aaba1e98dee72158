"""Test-wide settings: hypothesis profiles (``ci`` is derandomized and loaded when CI is set), and a
store of drawn examples of the suite's own (grader.checking.drawn), shared by the processes it starts."""

import atexit
import os
import shutil
import tempfile

if "SEQGRADE_CACHE_DIR" not in os.environ:
    os.environ["SEQGRADE_CACHE_DIR"] = tempfile.mkdtemp(prefix="seqgrade-test-cache-")
    atexit.register(shutil.rmtree, os.environ["SEQGRADE_CACHE_DIR"], True)
# One thread for torch's and OpenMP's pools, in the workers and every process they start (the grader sets one
# thread itself where it grades): the suite runs a worker per core and each starts more processes, and a pool's
# threads spin waiting for each other on a busy machine (nbgrader grading recursive_attention's solution in
# its kernel: 14.1 CPU s with two threads, 9.1 with one, two busy loops beside it).
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# Triton decides once per process, when triton.language is first imported, whether its own library functions
# (tl.zeros, ...) run in its interpreter: set TRITON_INTERPRET before any test module imports triton, or a
# worker that imported it first without the variable fails every interpreted kernel after ("Cannot call
# @triton.jit'd outside of the scope of a kernel"). On a CUDA machine the kernels compile.
if "TRITON_INTERPRET" not in os.environ:
    import torch

    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"
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
    from grader.course.release import release

    root = tmp_path_factory.mktemp("released")
    student = release("sequence_models", root / "student") / "sequence_models.ipynb"
    solution = release("sequence_models", root / "solution", solutions=True) / "sequence_models.ipynb"
    return student, solution


@pytest.fixture(scope="session")
def sandbox_grader():
    """One sandboxed Grader (one pre-loaded zygote) shared by the tests that grade whole notebooks."""
    from grader.grading import Grader
    from grader.jail.limits import Limits

    with Grader(Limits(call_timeout_s=5, cell_cpu_s=2, cell_timeout_s=5, submission_timeout_s=90)) as grader:
        yield grader


# --- make check ASSIGNMENT=<id>: the tests that prove one assignment ------------------------------------
# A test belongs to an assignment when it has a parameter `assignment` equal to its id, or lives in one of
# the files below (written for that assignment alone); COURSE_RULES hold for every exercise of the course,
# so they prove the assignment too. A path listed here that no longer exists stops the run, so a renamed
# file cannot silently drop out of `make check`.
ASSIGNMENT_FILES = {
    "sequence_models": (
        "tests/test_assignment.py",
        "tests/test_corpus.py",
        "tests/grader/test_checks.py",
        "tests/reference/test_autoregressive.py",
        "tests/reference/test_recurrent.py",
        "tests/reference/test_attention.py",
    ),
    "attention": (
        "tests/grader/test_checks_attention.py",
        "tests/grader/test_every_helper_served.py",
        "tests/reference/test_transformer.py",
    ),
    "recursive_attention": ("tests/reference/test_recursive.py", "tests/reference/test_flash.py"),
    "rnn_lm": (
        "tests/grader/test_checks_rnn_lm.py",
        "tests/grader/test_rnn_lm_grading.py",
        "tests/reference/test_rnn_lm.py",
    ),
    "lm_modules": (
        "tests/reference/test_lm_modules.py",
        "tests/test_selfchecks_lm_modules.py",
        "tests/grader/test_sampling_checks.py",
    ),
}
COURSE_RULES = (
    "tests/grader/test_fair_charging.py::test_every_check_states_when_it_cannot_be_judged",
    "tests/grader/test_fair_charging.py::test_every_function_exercise_declares_the_inputs_it_must_respond_to",
    "tests/grader/test_fair_charging.py::test_every_function_with_properties_has_a_probe",
    "tests/audit/test_audit.py::test_self_checks_never_look_at_an_answer",
    "tests/test_courses.py::test_every_assignment_has_a_corpus_and_is_listed_in_course_order",
    "tests/test_courses.py::test_list_shows_every_assignment",
    "tests/test_layering.py",
)


# The comparison of every corpus result with the recorded one (tests/corpus/recorded.py) guards changes that must
# not move a grade; `make check ASSIGNMENT=<id>` proves an assignment an author is changing, so it leaves it out.
RECORDED = "test_results_are_byte_identical_to_the_recorded_ones"


def pytest_addoption(parser):
    parser.addoption(
        "--assignment",
        metavar="ID",
        default=None,
        help="run only the tests that prove assignment ID (make check ASSIGNMENT=ID): those "
        "parametrized with it, the files written for it, and the course-wide rules",
    )


def pytest_collection_modifyitems(config, items):
    # A parallel run (make test: pytest-xdist, --dist loadfile) hands whole files to the workers in this order;
    # the files holding the slow tests (minutes each) go first, so that none starts last while the other
    # workers sit idle. The order within each group is kept.
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)
    assignment = config.getoption("--assignment")
    if assignment is None:
        return
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    if assignment not in ASSIGNMENT_FILES:
        raise pytest.UsageError(f"--assignment {assignment!r}: tests/conftest.py knows {', '.join(ASSIGNMENT_FILES)}")
    listed = (*ASSIGNMENT_FILES[assignment], *COURSE_RULES)
    missing = [p for p in listed if not (root / p.split("::")[0]).is_file()]
    if missing:
        raise pytest.UsageError(
            f"tests/conftest.py lists {missing}, which no longer exist: update ASSIGNMENT_FILES or COURSE_RULES"
        )

    def belongs(item) -> bool:
        if getattr(item, "originalname", "") == RECORDED:  # an author's change moves grades on purpose: make test
            return False
        params = getattr(getattr(item, "callspec", None), "params", {})
        if params.get("assignment") == assignment:
            return True
        node = item.nodeid.split("[")[0]
        return any(node == p or node.startswith(p + "::") for p in listed)

    keep = [item for item in items if belongs(item)]
    config.hook.pytest_deselected(items=[item for item in items if not belongs(item)])
    items[:] = keep
