"""Per-exercise sums of an audit's mutant outcomes."""

from __future__ import annotations

from grader.assignments.registry import Assignment

from .model import ExerciseSummary, MutantOutcome


def summarise(
    assignment: Assignment, outcomes: tuple[MutantOutcome, ...], selfchecked: set[str]
) -> tuple[ExerciseSummary, ...]:
    found = []
    for exercise in assignment.exercises:
        mine = [m for m in outcomes if m.exercise == exercise.id]
        if exercise.kind == "manual" or not mine and exercise.kind not in ("function", "class", "answer"):
            continue
        found.append(
            ExerciseSummary(
                exercise=exercise.id,
                kind=exercise.kind,
                made=len(mine),
                killed=sum(m.killed for m in mine),
                selfcheck_killed=sum(m.selfcheck.caught for m in mine if not m.error),
                both=sum(m.killed and m.selfcheck.caught for m in mine),
                survived=sum(m.survived for m in mine),
                equivalent=sum(bool(m.survived and m.equivalent) for m in mine),
                accepted=sum(m.accepted is not None for m in mine),
                double_charges=sum(bool(m.double_charged) for m in mine),
                errors=sum(bool(m.error) for m in mine),
                has_selfcheck=exercise.id in selfchecked,
            )
        )
    return tuple(found)
