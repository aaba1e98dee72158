"""A function that hung is not called again, and the check that says so names the call that hung (issue 37):
a never-returning forward hangs in the grader's first calls (the probe, before any listed check), so the
first listed check used to say "(in an earlier check, so it was not called again)" and show no call.

The student here is the solution run in this process, except that forward "hangs": its first call raises
what the sandbox raises when it stops a call, and later calls are refused the way the sandbox's session
refuses them (grader.sandbox.client). The real sandbox gives the same message (tests/corpus/hostile/
infinite_loop_function.py, graded by tests/test_corpus.py)."""

from grader.assignments.registry import SEQUENCE_MODELS
from grader.checking.calls import StudentTimeout
from grader.judge import judge_exercise
from grader.sandbox.inprocess import InProcess
from tests.grader.solutions import SOLUTION

STOPPED = "forward did not return: it was stopped after 0.1 s of CPU time (or after waiting 1 s without computing)"


class ForwardHangs:
    def __init__(self, student):
        self.student, self.calls, self.first = student, 0, None

    def __getattr__(self, attr):
        return getattr(self.student, attr)

    def call(self, name, args, **options):
        if name != "forward":
            return self.student.call(name, args, **options)
        self.calls += 1
        if self.first is not None:  # as the session refuses a function that hung
            raise type(self.first)(f"{self.first.message} (in an earlier check, so it was not called again)")
        self.first = StudentTimeout(STOPPED)
        raise self.first


def test_the_check_after_a_hang_names_the_call_that_hung():
    student, _ = InProcess.from_cells([(0, SOLUTION)], ("selfcheck",))
    hanging = ForwardHangs(student)
    others = [e.id for e in SEQUENCE_MODELS.exercises if e.kind == "function"]
    result = judge_exercise(SEQUENCE_MODELS.exercise("forward"), hanging, others=others)
    assert hanging.calls >= 1 and {c.status for c in result.checks} == {"timeout"}
    said = [c.message for c in result.checks if not c.message.startswith("not judged")]
    assert said, [c.message for c in result.checks]
    first = said[0]
    assert "in an earlier check" not in first
    assert (
        f"{STOPPED} (in the grader's first calls of forward, made before its checks, so it was not called again)"
        in first
    )
    assert "forward(seqs, Wrec, Win, Wout)" in first and "seqs = " in first  # the call that hung, to rerun
    assert "did not return" in result.root_cause
