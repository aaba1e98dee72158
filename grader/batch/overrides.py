"""A TA's override of one check's points for one student, with a reason the student sees.

Stored with the manual scores in OUTDIR/staff.json (kind "override"), so it survives regrades; the
grader's own points at the time and the cache key of the graded result it overrode are kept with it,
and a later regrade that changes either (new points for the check; a new notebook, seqgrade version or
limits) is reported (the override still applies).
"""
from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..results import StaffMark
from .record import read_record
from .staff import StoredMark, Target, editing_marks, load_marks, points_allowed, resolve_check


def _target(outdir, student: str, spec: str):
    record = read_record(outdir)
    if student not in record.students:
        known = ", ".join(sorted(record.students)[:10])
        raise UsageError(f"unknown student {student!r} in {outdir}; students include: {known}")
    from ..registry import get_assignment

    assignment = get_assignment(record.assignment)
    exercise, check, max_points = resolve_check(assignment, spec)
    return record, Target(student, exercise, check), max_points


def set_override(outdir: str | Path, student: str, spec: str, points: float, reason: str, *, by: str = "") -> StaffMark:
    """Store an override of ``spec`` (EXERCISE or EXERCISE.CHECK) for ``student``; return the mark."""
    if not reason or not reason.strip():
        raise UsageError("an override needs a reason (--reason TEXT); the student sees it on the feedback page")
    record, target, max_points = _target(outdir, student, spec)
    if not points_allowed(points, max_points):
        raise UsageError(f"points must be within [0, {max_points:g}] for {target.exercise}.{target.check}; got {points:g}")
    from . import outputs

    stored = outputs.read_result(Path(outdir), student)
    grader_points = next((c.points for e in stored[0].exercises if e.id == target.exercise
                          for c in e.checks if c.name == target.check), 0.0) if stored is not None else 0.0
    mark = StaffMark(kind="override", points=points, reason=reason.strip(), by=by, grader_points=grader_points)
    with editing_marks(outdir, record.assignment) as marks:
        marks[target] = StoredMark(mark, result_key=stored[1] if stored is not None else "")
    return mark


def remove_override(outdir: str | Path, student: str, spec: str) -> None:
    record, target, _ = _target(outdir, student, spec)
    with editing_marks(outdir, record.assignment) as marks:
        if marks.get(target) is None or marks[target].mark.kind != "override":
            raise UsageError(f"there is no override of {target.exercise}.{target.check} for {student}")
        del marks[target]


def list_marks(outdir: str | Path, kind: str | None = "override") -> list[tuple[Target, StaffMark]]:
    """The stored marks (overrides by default; ``kind=None`` for all), sorted by student and check."""
    read_record(outdir)  # says so when OUTDIR holds no batch
    marks = load_marks(outdir)
    return sorted(((t, s.mark) for t, s in marks.items() if kind is None or s.mark.kind == kind), key=lambda item: item[0])
