"""Judge one exercise: run its checks with stand-ins in place of the functions it builds on, pay nothing
for code that does no real work, charge a mechanical difference once, and name one root cause.

Rules (docs/architecture.md, "Checks, and grades a TA can defend"):
- the exercise's function is called with grader-served stand-ins for the student functions it uses
  (:mod:`grader.checking.standins`), so a wrong, missing or hanging helper costs only its own exercise;
- the exercise's probe (:class:`grader.checking.gate.Probe`) decides whether the function does real work;
  when it does not, no check pays (format and own checks are not run; a values check still runs so its
  counterexample is shown);
- when the first failing check finds a type, shape or dtype difference that mechanical steps undo on
  every case the probe saw (:mod:`grader.checking.mechanical`), that check is charged and the later ones
  judge the results with the steps undone, at the precision the answer was computed in;
- when a check finds values right to float32's precision only (kind "precision"), it alone is charged and the
  later ones judge at float32's precision;
- an own check never charges a format difference: it is then "not judged";
- after the first check that shows a difference from the reference, a later reference check that
  fails says "not judged" instead of repeating the counterexample;
- a function whose call hung or ended the process is not called again while the exercise is judged; each
  later call says which check (or the probe, before the checks) made that call, and shows its arguments;
- the first thing that went wrong (a charge before a check that could not be judged) is the exercise's
  ``root_cause``, shown first in the feedback.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

import torch

from grader.assignments.registry import Exercise
from grader.checking.base import run_check
from grader.checking.calls import StudentAborted, StudentCode
from grader.checking.compare import PRECISION
from grader.checking.gate import Observation
from grader.checking.kinds import FAILURE_KINDS
from grader.checking.reproduce import naming, with_call

from .checking import mechanical, standins
from .checking.unrun import manual_result, uniform_checks, uniform_result  # noqa: F401 (re-exported)
from .results import CheckResult, ExerciseResult

SHOWN_BY_FIRST = ("type", "shape", "dtype", "values")  # kinds a later reference check would only repeat
MECHANICAL = ("type", "shape", "dtype")  # kinds whose root cause may be mechanical (grader.checking.mechanical)


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def _root(kind: str, message: str) -> str:
    """The root cause as the feedback names it: the kind, then the message's first line (once: a message that
    already opens with the kind's name, such as "not judged: ...", is not prefixed again)."""
    label, line = FAILURE_KINDS.get(kind, kind), _first_line(message)
    return line if line.startswith(f"{label}:") else f"{label}: {line}"


class _Calls:
    """The student's code while one exercise is judged, knowing who calls (``who``: a check's name, or the
    probe). A function whose call hung or ended the process is not called again for the exercise, and each
    later call says which check made that call, with its arguments (not "an earlier check", which a student
    cannot find when the call was the probe's)."""

    def __init__(self, student: StudentCode):
        self._student, self.who, self._broken = student, "", {}

    def __getattr__(self, attr):
        return getattr(self._student, attr)

    def call(self, name: str, args, **options):
        if name in self._broken:
            who, first, first_args = self._broken[name]
            said = f"{first.message} (in {who}, so it was not called again)"
            try:
                said = with_call(said, name, first_args)
            except Exception:  # the arguments are extra text: they never cost the verdict itself
                pass
            raise type(first)(said)
        try:
            return self._student.call(name, args, **options)
        except StudentAborted as exc:
            self._broken.setdefault(name, (self.who or "an earlier check", exc, list(args)))
            raise


def _against(seen, outputs) -> tuple[int | None, str] | None:
    """What the probe saw (an Observation, or a class probe's reason) against a check of ``outputs``."""
    if isinstance(seen, Observation):
        return seen.against(outputs)
    return (None, seen) if seen else None


def _unpaid(exercise: Exercise, against: tuple[int | None, str]) -> tuple[str, str]:
    """(message, status) of a check that can pay nothing because of ``against`` (Observation.against): the
    reason names the output where only one does no real work."""
    why = against[1]
    return f"not judged: {exercise.id} does no real work: {why}", getattr(why, "status", "failed")


def _judge_check(
    check, exercise: Exercise, view, aborted: StudentAborted | None, degenerate: tuple[str, str] | None
) -> CheckResult:
    """One check's result: not judged when the probe saw the function hang or do no real work, or an output
    the check judges do none (``degenerate``: the message and status it then gets; a check about values still
    runs, so its counterexample is shown, but pays nothing then)."""
    if aborted is not None and check.gated:
        return CheckResult(
            name=check.name,
            status=aborted.status,
            points=0,
            max_points=check.points,
            message=f"not judged: {aborted.message}",
            kind=aborted.kind,
        )
    unpaid = CheckResult(
        name=check.name,
        status=degenerate[1] if degenerate else "failed",
        points=0,
        max_points=check.points,
        message=degenerate[0] if degenerate else "",
        kind="degenerate",
    )
    if degenerate and check.gated:
        return unpaid
    result = run_check(check.name, check.func, check.points, view, check.hint, check.hints)
    return unpaid if degenerate and result.status == "passed" else result


def judge_exercise(
    exercise: Exercise,
    student: StudentCode,
    explain_missing: Callable[[str], str] = lambda name: "",
    others: Sequence[str] = (),
) -> ExerciseResult:
    """Run the exercise's checks against ``student``; ``explain_missing(name)`` says why a name is undefined;
    ``others``: the assignment's graded functions, each served by the grader while this one is graded.
    Messages name each call's parameters as the declarations' references do."""
    with naming(exercise.assignment.argument_names if exercise.assignment is not None else {}):
        return _judge_exercise(exercise, student, explain_missing, others)


def _judge_exercise(
    exercise: Exercise, student: StudentCode, explain_missing: Callable[[str], str], others: Sequence[str]
) -> ExerciseResult:
    if exercise.kind == "manual":
        return manual_result(exercise)
    why = exercise.unjudgeable() if exercise.unjudgeable is not None else None
    if why:  # this machine cannot run what the exercise needs: nothing to judge, nothing charged
        return uniform_result(exercise, "failed", f"not judged: {why}", "not_judged")
    try:
        defined = student.defines(exercise.id)
    except StudentAborted as exc:
        return uniform_result(exercise, exc.status, exc.message, exc.kind)
    if not defined:
        detail = explain_missing(exercise.id)
        kind = "cell_error" if detail else "missing"
        message = f"{exercise.id} is not defined in the notebook" + (f": {detail}" if detail else "")
        return uniform_result(exercise, "missing", message, kind)
    calls = _Calls(student)
    view = standins.for_exercise(calls, exercise, others)
    seen, aborted = None, None
    if exercise.probe is not None:
        calls.who = f"the grader's first calls of {exercise.id}, made before its checks"
        try:
            seen = exercise.probe(view)
        except StudentAborted as exc:  # it hung or ended the process: that, not "no real work", is the charge
            aborted = exc
        except Exception:  # a fault in the probe itself: the checks then judge on their own (and say why)
            seen = None
    # Per check, why it can pay nothing: the function does no real work, or an output it judges does none
    # (Check.outputs); where that holds for every check, the function as a whole is charged, as one root cause.
    against = {c.name: _against(seen, c.outputs) for c in exercise.checks}
    whole = bool(seen) or (bool(against) and all(against.values()))
    degenerate = _against(seen, None)[1] if whole else None
    results, first, undone, token = [], None, None, None
    try:
        for check in exercise.checks:
            calls.who = check.name
            unpaid = _unpaid(exercise, against[check.name]) if against[check.name] else None
            result = _judge_check(check, exercise, undone or view, aborted, unpaid)
            if (
                undone is None
                and first is None
                and check.judges != "own"
                and result.status != "passed"
                and result.kind in MECHANICAL
                and isinstance(seen, Observation)
            ):
                fix = mechanical.explain(seen)
                if fix is not None:  # charged here once; every later check sees the result with it undone
                    undone = mechanical.Undone(view, exercise.id, fix)
                    token = PRECISION.set(fix.precision) if fix.precision is not None else None
                    results.append(
                        replace(
                            result,
                            message=f"{result.message}\n(Only this check is charged for "
                            f"it: the later ones judge your results with it undone: "
                            f"{fix.summary}.)",
                        )
                    )
                    continue
            if token is None and check.judges != "own" and result.kind == mechanical.PRECISION_KIND:
                # float32 arithmetic, charged here once: every later check judges at float32's precision (a class's
                # own dtypes check charges it too, while each of its checks observes the precision itself)
                token = PRECISION.set(mechanical.COARSER[torch.float64])
                results.append(
                    replace(
                        result,
                        message=f"{result.message}\n(Only this check is charged for it: the "
                        f"later ones judge your results at float32's precision.)",
                    )
                )
                continue
            if check.judges == "own" and result.status != "passed" and result.kind in MECHANICAL:
                # the property cannot be posed on a result of that form: not a charge of its own
                result = replace(
                    result,
                    kind="not_judged",
                    message=f"not judged: {_first_line(result.message)} (see the checks of its values)",
                )
            elif check.judges != "own" and result.status != "passed" and result.kind in SHOWN_BY_FIRST:
                if first is None:
                    first = result
                else:
                    result = replace(
                        result,
                        kind="not_judged",
                        message=f"not judged: {first.name} above already shows how the result differs",
                    )
            results.append(result)
    finally:
        if token is not None:
            PRECISION.reset(token)
    if aborted is not None:
        root = f"{FAILURE_KINDS.get(aborted.kind, aborted.kind)}: {aborted.message}"
    elif degenerate:
        root = f"{FAILURE_KINDS['degenerate']}: {degenerate}"
    else:  # the first charge; a check that could not be judged only when nothing was charged
        failed = [r for r in results if r.status != "passed"]
        first = next((r for r in failed if r.kind != "not_judged"), failed[0] if failed else None)
        root = _root(first.kind, first.message) if first else ""
        if first is not None and against[first.name]:  # it judges an output that does no real work: that is why
            root = f"{FAILURE_KINDS['degenerate']}: {against[first.name][1]}"
    return ExerciseResult(
        id=exercise.id, checks=tuple(results), max_score=exercise.points, root_cause=root, bonus=exercise.bonus
    )
