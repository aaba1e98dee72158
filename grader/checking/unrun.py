"""The results of exercises whose checks were not run: manual ones (course staff grade them) and every exercise
of a notebook that could not be graded (plain data: the batch's own process makes them without the checks)."""

from __future__ import annotations

from grader.results import MANUAL_CHECK, MANUAL_MESSAGE, CheckResult, ExerciseResult

from .exercise import Exercise
from .kinds import FAILURE_KINDS


def manual_result(exercise: Exercise) -> ExerciseResult:
    check = CheckResult(
        name=MANUAL_CHECK, status="manual", points=0, max_points=exercise.points, message=MANUAL_MESSAGE
    )
    return ExerciseResult(id=exercise.id, checks=(check,), max_score=exercise.points, manual=True)


def uniform_checks(exercise: Exercise, status: str, message: str, kind: str) -> tuple[CheckResult, ...]:
    """Every check of a (non-manual) exercise at 0 points, with the same status, message and kind."""
    return tuple(
        CheckResult(name=c.name, status=status, points=0, max_points=c.points, message=message, kind=kind)
        for c in exercise.checks
    )


def uniform_result(exercise: Exercise, status: str, message: str, kind: str) -> ExerciseResult:
    """Every check of the exercise with the same status and message (nothing to run them on)."""
    if exercise.kind == "manual":
        return manual_result(exercise)
    return ExerciseResult(
        id=exercise.id,
        checks=uniform_checks(exercise, status, message, kind),
        max_score=exercise.points,
        root_cause=f"{FAILURE_KINDS.get(kind, kind)}: {message}",
        bonus=exercise.bonus,
    )
