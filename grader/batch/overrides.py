"""A TA's override of one check's points for one student, with a reason the student sees.

Stored with the manual scores in OUTDIR/staff.json (kind "override"), so it survives regrades. It is bound
to the notebook it was made on: the digest of the notebook's code cells (and the cache key of the graded
result it overrode) is kept with it, with the grader's own points at the time. When the student hands in
other code, the override is set aside (kept and listed, ``override stale``) and the grader's points count
until a TA confirms it (``confirm_override``: the same points and reason, bound to the code now) or sets
or removes it. On the same code, a regrade that gives the check other points is reported (the override
still applies).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from grader.errors import UsageError
from grader.results import MANUAL_CHECK, StaffMark

from .csvfile import neutralised
from .people import resolve_student
from .record import read_record
from .staff import StoredMark, Target, editing_marks, load_marks, points_allowed, resolve_check
from .totals import OVERRIDE_STALE

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
    if target.check == MANUAL_CHECK:  # one kind of mark per written answer: a manual score, with its comment
        raise UsageError(
            f"{target.exercise} is a written answer: score it with `seqgrade manual import` (or in "
            f"formgrader), whose comment the student sees; an override would replace that score"
        )
    if not points_allowed(points, max_points):
        raise UsageError(
            f"points must be within [0, {max_points:g}] for {target.exercise}.{target.check}; got {points:g}"
        )
    from . import outputs

    stored = outputs.read_result(Path(outdir), student)
    grader_points = _grader_points(stored, target)
    mark = StaffMark(kind="override", points=points, reason=reason.strip(), by=by, grader_points=grader_points)
    with editing_marks(outdir, record.assignment) as marks:
        marks[target] = _bound_here(mark, record.students[student], stored)
    return target, mark


def _grader_points(stored, target: Target) -> float:
    """The grader's own points for the target's check in the stored result (0 when none is stored)."""
    return (
        next(
            (
                c.points
                for e in stored[0].exercises
                if e.id == target.exercise
                for c in e.checks
                if c.name == target.check
            ),
            0.0,
        )
        if stored is not None
        else 0.0
    )


def _bound_here(mark: StaffMark, who, stored) -> StoredMark:
    """``mark`` bound to the student's notebook as the batch holds it now: its code and its graded result."""
    return StoredMark(mark, result_key=stored[1] if stored is not None else "", code_sha256=who.code_sha256 or None)


def confirm_override(outdir: str | Path, student: str, spec: str, *, by: str = "") -> tuple[Target, StaffMark]:
    """Apply a stored override to the student's notebook as it is now (after it changed, the override was
    set aside): the same points and reason, bound to the current code, with the grader's points now."""
    record, target, _ = _target(outdir, student, spec)
    from . import outputs

    with editing_marks(outdir, record.assignment) as marks:
        old = marks.get(target)
        if old is None or old.mark.kind != "override":
            raise UsageError(
                f"there is no override of {target.exercise}.{target.check} for {target.student} to confirm"
            )
        stored = outputs.read_result(Path(outdir), target.student)
        mark = replace(old.mark, grader_points=_grader_points(stored, target), by=by or old.mark.by)
        marks[target] = _bound_here(mark, record.students[target.student], stored)
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
        counts = (
            "no: the student is not in this batch"
            if who is None
            else "no: set aside, the answer changed since it was scored"
            if stored.answer_changed(who.answers.get(t.exercise, ""))
            else f"no: {OVERRIDE_STALE}, the notebook's code changed since it was set; the grader's points count "
            f"until `seqgrade override OUTDIR {t.student} {t.exercise}.{t.check} --confirm`"
            if stored.code_changed(who.code_sha256, _result_key(outdir, t.student))
            else "yes"
        )
        listed.append((t, stored.mark, counts))
    return listed


def _result_key(outdir, student: str) -> str:
    from . import outputs

    stored = outputs.read_result(Path(outdir), student)
    return stored[1] if stored is not None else ""


def listing(outdir: str | Path, every: bool = False) -> str:
    """``seqgrade override --list`` as tab-separated text for tools: one mark a line, text cells neutralised
    against spreadsheet formulas as in every CSV seqgrade writes, tabs and line breaks in them turned to spaces."""

    def text(value: str) -> str:
        return neutralised(" ".join(value.replace("\t", " ").splitlines()))

    lines = ["\t".join(LIST_HEADER)]
    for t, m, counts in list_marks(outdir, kind=None if every else "override"):
        lines.append(
            "\t".join(
                [
                    text(t.student),
                    text(f"{t.exercise}.{t.check}"),
                    m.kind,
                    f"{m.points:g}",
                    f"{m.grader_points:g}",
                    text(m.by),
                    text(counts),
                    text(m.reason),
                ]
            )
        )
    return "\n".join(lines) + "\n"
