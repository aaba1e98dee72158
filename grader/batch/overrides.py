"""A TA's override of one check's points for one student, with a reason the student sees.

Stored with the manual scores in OUTDIR/staff.json (kind "override"), so it survives regrades; the
grader's own points at the time and the cache key of the graded result it overrode are kept with it,
and a later regrade that changes either (new points for the check; a new notebook, seqgrade version or
limits) is reported (the override still applies).
"""
from __future__ import annotations

from pathlib import Path

from grader.errors import UsageError
from grader.results import StaffMark

from .csvfile import neutralised
from .people import resolve_student
from .record import read_record
from .staff import StoredMark, Target, editing_marks, load_marks, points_allowed, resolve_check

LIST_HEADER = ("student", "check", "kind", "points", "grader_points_when_set", "by", "counts", "reason")


def _target(outdir, student: str, spec: str):
    """(the batch record, the target, the check's points); the student by id, or by LMS name or email."""
    record = read_record(outdir)
    student = resolve_student(record.students, student)
    from grader.assignments.registry import get_assignment

    assignment = get_assignment(record.assignment)
    exercise, check, max_points = resolve_check(assignment, spec)
    return record, Target(student, exercise, check), max_points


def set_override(outdir: str | Path, student: str, spec: str, points: float, reason: str, *, by: str = "") -> StaffMark:
    """Store an override of ``spec`` (EXERCISE or EXERCISE.CHECK) for ``student`` (an id, or the LMS's name
    or email of one student); return the target and the mark."""
    if not reason or not reason.strip():
        raise UsageError("an override needs a reason (--reason TEXT); the student sees it on the feedback page")
    record, target, max_points = _target(outdir, student, spec)
    student = target.student
    if not points_allowed(points, max_points):
        raise UsageError(f"points must be within [0, {max_points:g}] for {target.exercise}.{target.check}; got {points:g}")
    from . import outputs

    stored = outputs.read_result(Path(outdir), student)
    grader_points = next((c.points for e in stored[0].exercises if e.id == target.exercise
                          for c in e.checks if c.name == target.check), 0.0) if stored is not None else 0.0
    mark = StaffMark(kind="override", points=points, reason=reason.strip(), by=by, grader_points=grader_points)
    with editing_marks(outdir, record.assignment) as marks:
        marks[target] = StoredMark(mark, result_key=stored[1] if stored is not None else "")
    return target, mark


def remove_override(outdir: str | Path, student: str, spec: str) -> Target:
    record, target, _ = _target(outdir, student, spec)
    with editing_marks(outdir, record.assignment) as marks:
        if marks.get(target) is None or marks[target].mark.kind != "override":
            raise UsageError(f"there is no override of {target.exercise}.{target.check} for {target.student}")
        del marks[target]
    return target


def list_marks(outdir: str | Path, kind: str | None = "override") -> list[tuple[Target, StaffMark, str]]:
    """The stored marks (overrides by default; ``kind=None`` for all), sorted by student and check, each with
    whether it counts: "yes", or why not (a manual score set aside because the answer changed since)."""
    record = read_record(outdir)  # says so when OUTDIR holds no batch
    listed = []
    for t, stored in sorted(load_marks(outdir).items(), key=lambda item: item[0]):
        if kind is not None and stored.mark.kind != kind:
            continue
        who = record.students.get(t.student)
        counts = ("no: the student is not in this batch" if who is None else
                  "no: set aside, the answer changed since it was scored" if stored.answer_changed(who.answers.get(t.exercise, ""))
                  else "yes")
        listed.append((t, stored.mark, counts))
    return listed


def listing(outdir: str | Path, every: bool = False) -> str:
    """``seqgrade override --list`` as tab-separated text for tools: one mark a line, text cells neutralised
    against spreadsheet formulas as in every CSV seqgrade writes, tabs and line breaks in them turned to spaces."""
    def text(value: str) -> str:
        return neutralised(" ".join(value.replace("\t", " ").splitlines()))
    lines = ["\t".join(LIST_HEADER)]
    for t, m, counts in list_marks(outdir, kind=None if every else "override"):
        lines.append("\t".join([text(t.student), text(f"{t.exercise}.{t.check}"), m.kind, f"{m.points:g}",
                                f"{m.grader_points:g}", text(m.by), text(counts), text(m.reason)]))
    return "\n".join(lines) + "\n"
