"""Points set by course staff, kept beside a batch's outputs in ``OUTDIR/staff.json``.

One file holds every manual score and override of the batch, keyed by (student, exercise, check).
The grader never writes it; a regrade reads it and applies each mark to the fresh result again, so
marks survive regrades whether or not the notebook changed. Written atomically; versioned.

Each mark also keeps what it was made on: a manual score the digest of the answer it scored
(``answer_digest``), an override the digest of the notebook's code cells it was made on
(``facts.code_digest``) and the cache key of the graded result it overrode (a digest of the notebook's
bytes, the assignment, seqgrade's version and the limits). ``grader.batch.totals`` sets a manual score
aside when the answer changed, and an override when the code changed (the grader's points stand until
staff confirm it: ``seqgrade override ... --confirm``). Version 1 files have no bindings and version 2
overrides no code digest: such marks are bound to what is at hand the first time a batch or staff command
publishes from them (``bind_unbound``), and saved as version 3.

Two TAs (or a TA and a batch) working on one OUTDIR at once take turns: every read-modify-write of the
marks, and every publication of the outputs from them, holds ``OUTDIR/.staff.lock`` (an exclusive
``flock``), so no mark is lost to a concurrent save and no output is written from marks already stale.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from grader.errors import OutputNotWritable, UsageError
from grader.fsutil import write_atomic
from grader.results import MANUAL_CHECK, StaffMark

if TYPE_CHECKING:
    from grader.assignments.registry import Assignment

STAFF_FILE = "staff.json"
STAFF_SCHEMA_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)  # version 1: marks without what they were made on; 2: overrides without their code


@dataclass(frozen=True, order=True)
class Target:
    """One check of one student's notebook (ordered by student, exercise, check)."""

    student: str
    exercise: str
    check: str

    def __str__(self) -> str:
        return f"{self.student} {self.exercise}.{self.check}"


@dataclass(frozen=True)
class StoredMark:
    """A staff mark as staff.json keeps it, with what it was made on (None: not known yet). ``result_key``
    is "" for an override set where no graded result was stored; ``code_sha256`` is "" where the batch
    record did not know the notebook's code (a batch.json older than version 3)."""

    mark: StaffMark
    answer_sha256: str | None = None  # manual: answer_digest of the answer it scored
    result_key: str | None = None  # override: cache key of the graded result it overrode
    code_sha256: str | None = None  # override: facts.code_digest of the notebook's code cells it was made on

    @property
    def bound(self) -> bool:
        if self.mark.kind == "manual":
            return self.answer_sha256 is not None
        return self.code_sha256 is not None or self.result_key is not None

    def answer_changed(self, answer: str) -> bool:
        """A manual score made on another answer than ``answer`` (never for an unbound mark)."""
        return (
            self.mark.kind == "manual"
            and self.answer_sha256 is not None
            and self.answer_sha256 != answer_digest(answer)
        )

    def regraded(self, key: str) -> bool:
        """An override made on another graded result than the one whose cache key is ``key``."""
        return self.mark.kind == "override" and self.result_key is not None and self.result_key != key

    def code_changed(self, code: str, key: str) -> bool:
        """An override made on other code than the notebook's now (``code``: its digest, "" when not known;
        ``key``: the cache key of its graded result). An override bound only to a graded result (staff.json
        version 2) counts as made on other code once that notebook was graded again: which code it was made
        on is not known, so it waits for staff like any other."""
        if self.mark.kind != "override":
            return False
        if self.code_sha256:
            return bool(code) and self.code_sha256 != code
        return bool(self.result_key) and bool(key) and self.result_key != key


def answer_normal(text: str) -> str:
    """An answer compared as text: line ends unified, trailing spaces and blank lines at either end dropped
    (what a spreadsheet or an editor may change without the student changing anything)."""
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").strip().split("\n"))


def answer_digest(text: str) -> str:
    return hashlib.sha256(answer_normal(text).encode("utf-8")).hexdigest()


def resolve_check(assignment: Assignment, spec: str) -> tuple[str, str, float]:
    """(exercise, check, the check's points) for ``EXERCISE`` or ``EXERCISE.CHECK``; UsageError naming
    what exists when it does not. An exercise alone is enough when it has one check (manual questions)."""
    exercise_id, _, check = spec.partition(".")
    try:
        exercise = assignment.exercise(exercise_id)
    except KeyError:
        known = ", ".join(e.id for e in assignment.exercises)
        raise UsageError(f"{assignment.id} has no exercise {exercise_id!r}; its exercises: {known}") from None
    checks = (
        {MANUAL_CHECK: exercise.points} if exercise.kind == "manual" else {c.name: c.points for c in exercise.checks}
    )
    if not check:
        if len(checks) != 1:
            raise UsageError(
                f"{exercise_id} has {len(checks)} checks; name one as {exercise_id}.CHECK: {', '.join(checks)}"
            )
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


def load_marks(outdir: str | Path) -> dict[Target, StoredMark]:
    """Every mark stored for the batch in ``outdir`` (none when the file does not exist yet)."""
    path = staff_path(outdir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the staff marks in {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("version") not in READABLE_VERSIONS:
        raise UsageError(f"{path} is not a staff file of version {' or '.join(map(str, READABLE_VERSIONS))}")
    marks = {}
    try:
        for entry in data["marks"]:
            target = Target(str(entry["student"]), str(entry["exercise"]), str(entry["check"]))
            mark = StaffMark(
                kind=entry["kind"],
                points=entry["points"],
                reason=entry.get("reason", ""),
                by=entry.get("by", ""),
                grader_points=entry.get("grader_points", 0.0),
            )
            marks[target] = StoredMark(
                mark,
                _text_or_none(entry.get("answer_sha256")),
                _text_or_none(entry.get("result_key")),
                _text_or_none(entry.get("code_sha256")),
            )
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{path} has a malformed mark: {exc}") from None
    return marks


def _text_or_none(value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"a digest is text; got {value!r}")
    return value


def save_marks(outdir: str | Path, assignment: str, marks: dict[Target, StoredMark]) -> None:
    entries = []
    for t, stored in sorted(marks.items(), key=lambda item: item[0]):
        m = stored.mark
        entry = {
            "student": t.student,
            "exercise": t.exercise,
            "check": t.check,
            "kind": m.kind,
            "points": m.points,
            "reason": m.reason,
            "by": m.by,
            "grader_points": m.grader_points,
        }
        bindings = (
            {"answer_sha256": stored.answer_sha256}
            if m.kind == "manual"
            else {"result_key": stored.result_key, "code_sha256": stored.code_sha256}
        )
        entry.update({k: v for k, v in bindings.items() if v is not None})
        entries.append(entry)
    data = {"version": STAFF_SCHEMA_VERSION, "assignment": assignment, "marks": entries}
    write_atomic(staff_path(outdir), json.dumps(data, indent=2, allow_nan=False) + "\n")


def bind_unbound(
    marks: dict[Target, StoredMark], answers: dict[str, dict], keys: dict[str, str], codes: dict[str, str] | None = None
) -> dict[Target, StoredMark]:
    """``marks`` with every mark not bound yet bound to what is at hand now: a manual score (version 1) to
    its student's answer in ``answers`` (student -> question -> text), an override to the cache key of its
    student's result in ``keys`` ("" when none) and to the digest of the student's code in ``codes``. An
    override bound to a graded result only (version 2) is bound to the code when that result is the one at
    hand (the same notebook); otherwise it stays as it is, set aside until staff confirm it. Marks of
    students not in ``answers`` stay as they are."""
    bound, codes = dict(marks), codes or {}
    for target, stored in marks.items():
        student = target.student
        if student not in answers:
            continue
        if stored.mark.kind == "manual":
            if stored.answer_sha256 is None:
                bound[target] = replace(stored, answer_sha256=answer_digest(answers[student].get(target.exercise, "")))
        elif (
            stored.code_sha256 is None and codes.get(student) and stored.result_key in (None, "", keys.get(student, ""))
        ):
            bound[target] = replace(stored, result_key=keys.get(student, ""), code_sha256=codes[student])
        elif stored.result_key is None:
            bound[target] = replace(stored, result_key=keys.get(student, ""))
    return bound
