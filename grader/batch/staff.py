"""Points set by course staff, kept beside a batch's outputs in ``OUTDIR/staff.json``.

One file holds every manual score and override of the batch, keyed by (student, exercise, check).
The grader never writes it; a regrade reads it and applies each mark to the fresh result again, so
marks survive regrades whether or not the notebook changed. Written atomically; versioned.

Two TAs (or a TA and a batch) working on one OUTDIR at once take turns: every read-modify-write of the
marks, and every publication of the outputs from them, holds ``OUTDIR/.staff.lock`` (an exclusive
``flock``), so no mark is lost to a concurrent save and no output is written from marks already stale.
"""
from __future__ import annotations

import fcntl
import json
import math
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import OutputNotWritable, UsageError
from ..fsutil import write_atomic
from ..results import MANUAL_CHECK, NotebookResult, StaffMark

if TYPE_CHECKING:
    from ..registry import Assignment

STAFF_FILE = "staff.json"
STAFF_SCHEMA_VERSION = 1


@dataclass(frozen=True, order=True)
class Target:
    """One check of one student's notebook (ordered by student, exercise, check)."""
    student: str
    exercise: str
    check: str

    def __str__(self) -> str:
        return f"{self.student} {self.exercise}.{self.check}"


def resolve_check(assignment: Assignment, spec: str) -> tuple[str, str, float]:
    """(exercise, check, the check's points) for ``EXERCISE`` or ``EXERCISE.CHECK``; UsageError naming
    what exists when it does not. An exercise alone is enough when it has one check (manual questions)."""
    exercise_id, _, check = spec.partition(".")
    try:
        exercise = assignment.exercise(exercise_id)
    except KeyError:
        known = ", ".join(e.id for e in assignment.exercises)
        raise UsageError(f"{assignment.id} has no exercise {exercise_id!r}; its exercises: {known}") from None
    checks = {MANUAL_CHECK: exercise.points} if exercise.kind == "manual" else {c.name: c.points for c in exercise.checks}
    if not check:
        if len(checks) != 1:
            raise UsageError(f"{exercise_id} has {len(checks)} checks; name one as {exercise_id}.CHECK: {', '.join(checks)}")
        check = next(iter(checks))
    if check not in checks:
        raise UsageError(f"{exercise_id} has no check {check!r}; its checks: {', '.join(checks)}")
    return exercise_id, check, float(checks[check])


def points_allowed(points: float, max_points: float) -> bool:
    """A mark's points must be a finite number within [0, the check's points]."""
    return math.isfinite(points) and 0 <= points <= max_points


def staff_path(outdir: str | Path) -> Path:
    return Path(outdir) / STAFF_FILE


_held = threading.local()  # the lock files this thread holds, and how deeply


@contextmanager
def staff_lock(outdir: str | Path):
    """Hold the batch's staff lock for the body: other processes and threads wait; the same thread may
    take it again inside (a command that edits the marks and then publishes)."""
    if not Path(outdir).is_dir():  # no batch there: nothing to protect (the body says what is missing)
        yield
        return
    key = os.path.realpath(Path(outdir) / ".staff.lock")
    depth = getattr(_held, "depth", None)
    if depth is None:
        depth = _held.depth = {}
    if depth.get(key):
        depth[key] += 1
        try:
            yield
        finally:
            depth[key] -= 1
        return
    try:
        handle = open(key, "a")
    except OSError as exc:
        raise OutputNotWritable(key, exc.strerror or str(exc)) from None
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # released when the file is closed
        depth[key] = 1
        try:
            yield
        finally:
            del depth[key]


@contextmanager
def editing_marks(outdir: str | Path, assignment: str):
    """The stored marks for one read-modify-write under the staff lock; saved afterwards if the body
    changed them (not when it raised)."""
    with staff_lock(outdir):
        marks = load_marks(outdir)
        before = dict(marks)
        yield marks
        if marks != before:
            save_marks(outdir, assignment, marks)


def load_marks(outdir: str | Path) -> dict[Target, StaffMark]:
    """Every mark stored for the batch in ``outdir`` (none when the file does not exist yet)."""
    path = staff_path(outdir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the staff marks in {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("version") != STAFF_SCHEMA_VERSION:
        raise UsageError(f"{path} is not a version {STAFF_SCHEMA_VERSION} staff file")
    marks = {}
    try:
        for entry in data["marks"]:
            target = Target(str(entry["student"]), str(entry["exercise"]), str(entry["check"]))
            marks[target] = StaffMark(kind=entry["kind"], points=entry["points"], reason=entry.get("reason", ""),
                                      by=entry.get("by", ""), grader_points=entry.get("grader_points", 0.0))
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{path} has a malformed mark: {exc}") from None
    return marks


def save_marks(outdir: str | Path, assignment: str, marks: dict[Target, StaffMark]) -> None:
    entries = [{"student": t.student, "exercise": t.exercise, "check": t.check, "kind": m.kind, "points": m.points,
                "reason": m.reason, "by": m.by, "grader_points": m.grader_points}
               for t, m in sorted(marks.items(), key=lambda item: item[0])]
    data = {"version": STAFF_SCHEMA_VERSION, "assignment": assignment, "marks": entries}
    write_atomic(staff_path(outdir), json.dumps(data, indent=2, allow_nan=False) + "\n")


def apply_marks(student: str, result: NotebookResult, marks: dict[Target, StaffMark]) -> tuple[NotebookResult, list[str]]:
    """``result`` with exactly the stored marks of ``student`` on its checks (marks already on it are
    replaced), and notes for the TA (each naming the check, not the student): an override whose check the grader now scores differently from
    when it was set (kept, and said), and marks whose check this result does not have."""
    notes = []
    mine = {(t.exercise, t.check): m for t, m in marks.items() if t.student == student}
    used = set()
    exercises = []
    for e in result.exercises:
        checks = []
        for c in e.checks:
            mark = mine.get((e.id, c.name))
            if mark is not None:
                used.add((e.id, c.name))
                if mark.kind == "override" and mark.grader_points != c.points:
                    notes.append(f"{e.id}.{c.name}: the grader now gives {c.points:g} points (it gave "
                                 f"{mark.grader_points:g} when the override was set); the override of {mark.points:g} is kept")
                mark = replace(mark, grader_points=c.points)
            checks.append(replace(c, staff=mark))
        exercises.append(replace(e, checks=tuple(checks)))
    for exercise_id, check in sorted(set(mine) - used):
        notes.append(f"{exercise_id}.{check}: the {mine[(exercise_id, check)].kind} mark is not applied "
                     f"(this result has no such check: status {result.status})")
    return replace(result, exercises=tuple(exercises)), notes
