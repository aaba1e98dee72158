"""The bonus exercise flash_forward (recursive_attention): the reference against float64, what a grading machine
without triton makes of it, and its self-check on a kernel left undone. The checks themselves are shown right
and wrong by the corpus (tests/corpus/courses/recursive_attention: the kernel_* entries), graded through the
sandbox by tests/test_courses.py."""

import contextlib
import importlib.util
import io
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.assignments.recursive_attention import flash_kernel
from grader.assignments.registry import ASSIGNMENTS
from grader.judge import judge_exercise
from grader.sandbox.inprocess import InProcess
from reference import recursive

EXERCISE = ASSIGNMENTS["recursive_attention"].exercise("flash_forward")
HAS_TRITON = importlib.util.find_spec("triton") is not None


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 32), st.booleans(), st.integers(0, 999))
def test_reference_flash_forward_is_attention_in_float32(Nq, Nk, d, causal, seed):
    Nk = Nq if causal else Nk
    gen = torch.Generator().manual_seed(seed)
    Q, K, V = (torch.randn(n, d, generator=gen, dtype=torch.float64) for n in (Nq, Nk, Nk))
    O, lse = recursive.flash_forward(Q, K, V, causal)
    want = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=causal)  # the oracle, float64
    scores = Q @ K.T / math.sqrt(d)
    if causal:
        scores = scores.masked_fill(torch.ones(Nq, Nk, dtype=torch.bool).triu(1), -math.inf)
    assert O.dtype == lse.dtype == torch.float32
    torch.testing.assert_close(O.double(), want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(lse.double(), torch.logsumexp(scores, -1), rtol=1e-5, atol=1e-5)


def test_is_a_bonus_judged_only_where_triton_is_installed(monkeypatch):
    """Where triton is missing, every check says why it is not judged and the kernel is never called (its cell
    could not even have run); the bonus then costs nothing."""
    assert EXERCISE.bonus and EXERCISE.max_points == 0 and EXERCISE.points == 5
    student, _ = InProcess.from_cells([(0, "def flash_forward(*args):\n    raise SystemExit('called')\n")])
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "triton" else real(name, *a))
    result = judge_exercise(EXERCISE, student)
    assert result.bonus and result.score == 0 and len(result.checks) == len(EXERCISE.checks)
    assert {(c.status, c.kind, c.message) for c in result.checks} == {
        (
            "failed",
            "not_judged",
            "not judged: triton is not installed on the grading machine, so Triton kernels cannot run here",
        )
    }
    monkeypatch.undo()
    assert (flash_kernel.triton_missing() is None) == HAS_TRITON


def _selfcheck():
    from grader.audit.selfchecks import load_selfcheck_module
    from grader.course.release import ASSIGNMENTS_ROOT

    return load_selfcheck_module(ASSIGNMENTS_ROOT / "source" / "recursive_attention")


@pytest.mark.parametrize("raised", ["NotImplementedError()", "InterpreterError('NotImplementedError()')"])
def test_the_self_check_of_a_bonus_left_undone_says_so_and_fails_nothing(raised):
    """The released stub's kernel raises NotImplementedError, which Triton's interpreter wraps."""
    namespace: dict = {}
    exec(f"class InterpreterError(Exception):\n    pass\n\ndef flash_forward(*args):\n    raise {raised}\n", namespace)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert _selfcheck().check_flash_forward(namespace["flash_forward"]) is None
    if HAS_TRITON:
        assert out.getvalue() == (
            "[skipped] flash_forward (bonus): not attempted (the kernel's body still raises NotImplementedError)\n"
        )
    else:
        assert out.getvalue().startswith("[skipped] flash_forward (bonus): triton is not installed here")
