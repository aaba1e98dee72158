"""A late policy: when an assignment is due, how late work is charged, and who has more time.

A policy is versioned JSON, kept per assignment in the course config (``assignments/course.json``:
``{"version": 1, "assignments": {"<id>": {"late_policy": {...}}}}``) or in a file given to
``seqgrade batch --late-policy``::

    {"version": 1,
     "due": "2025-10-20T23:59:00+02:00",   # or without an offset, read in "timezone"
     "timezone": "Europe/Berlin",           # IANA zone of times written without an offset (default: the due's)
     "grace_minutes": 15,                   # work up to this long after the due time is on time
     "penalty": {"per_day": 10, "floor": 50},
     "extensions": "extensions.csv"}        # optional: student, due, reason (relative to the policy file)

``penalty`` is either ``{"per_day": P, "floor": F}`` (P percent of the total per started day after the
due time, never below F percent of credit) or ``{"windows": [{"hours": 24, "credit": 80}, {"hours": 72,
"credit": 50}], "then": 0}`` (the credit of the first window the lateness falls in, ``then`` after the
last). A time written without an offset (an extension's, a Canvas zip's file times, which carry none)
is read in ``timezone``, else at the due time's offset, else in UTC; ``archive_timezone`` overrides that
for the zip's file times. A date alone covers all of that day (work handed in at 23:59:59.9 is on time).
An extension ends after the due time; a row dated before it is refused (``ExtensionRefused``, naming the
file's line). A submission time the policy cannot read is never taken as on time: no charge is applied
and the row says "submission time unreadable", for the TA to decide.

A submission's time comes from the export (``StudentRecord.submitted``). ``assess`` turns the policy and
that time into a ``LateCharge``; ``grader.batch.totals.final_result`` applies it to the total, after
staff marks, so every output agrees. Applying it never changes what the grader decided (results/*.json),
so changing the policy and running the batch again changes the late rows only.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.errors import StudentNotFound, UsageError
from grader.results import LateCharge

from .csvfile import unquoted
from .people import resolve_student

POLICY_VERSION = 1
COURSE_VERSION = 1
COURSE_FILE = "course.json"
EXTENSION_COLUMNS = ("student", "due", "reason")
ARCHIVE_TIME = "Canvas file time"  # a zip entry's time, which has no zone
UNREADABLE = "submission time unreadable"  # how a row and the batch's notes begin when a time cannot be read


class ExtensionRefused(UsageError):
    """A row of the extensions file that would take time away: its due time is before the assignment's."""

    def __init__(self, path, line_number: int, line: str, why: str):
        super().__init__(f"{path}, line {line_number} ({line.strip()!r}): {why}")
        self.path, self.line_number, self.line = str(path), line_number, line


@dataclass(frozen=True)
class Extension:
    due: str  # ISO 8601, with an offset or read in the policy's timezone
    reason: str = ""


@dataclass(frozen=True)
class LatePolicy:
    due: str
    timezone: str = ""  # "" for the due time's own offset (UTC when it has none)
    grace_minutes: float = 0.0
    per_day: float | None = None  # percent per started day late (or None for windows)
    floor: float = 0.0  # the least credit, percent
    windows: tuple[tuple[float, float], ...] = ()  # (hours after the due time, credit percent), ascending
    then: float = 0.0  # credit after the last window, percent
    archive_timezone: str = ""
    extensions: dict = field(default_factory=dict)  # student id -> Extension

    def to_dict(self) -> dict:
        penalty = (
            {"per_day": self.per_day, "floor": self.floor}
            if self.per_day is not None
            else {"windows": [{"hours": h, "credit": c} for h, c in self.windows], "then": self.then}
        )
        data = {
            "version": POLICY_VERSION,
            "due": self.due,
            "timezone": self.timezone,
            "grace_minutes": self.grace_minutes,
            "penalty": penalty,
            "archive_timezone": self.archive_timezone,
            "extensions": {s: {"due": e.due, "reason": e.reason} for s, e in sorted(self.extensions.items())},
        }
        return data

    def describe(self) -> str:
        """The policy in one line, as the batch prints it."""
        rule = (
            f"{self.per_day:g}% per started day, at least {self.floor:g}% credit"
            if self.per_day is not None
            else ", ".join(f"{c:g}% within {h:g} h" for h, c in self.windows) + f", then {self.then:g}%"
        )
        grace = f", {self.grace_minutes:g} min grace" if self.grace_minutes else ""
        ext = f", {len(self.extensions)} extension(s)" if self.extensions else ""
        return f"due {_shown(self.due_time(), self)}{grace}; {rule}{ext}"

    def zone(self) -> dt.tzinfo:
        """Where times written without an offset are read."""
        if self.timezone:
            return _zone(self.timezone)
        return instant(self.due, dt.timezone.utc).tzinfo

    def due_time(self, student: str | None = None) -> dt.datetime:
        """The due time, or ``student``'s extended one."""
        extension = self.extensions.get(student) if student is not None else None
        return instant(extension.due if extension else self.due, self.zone())


def _zone(name: str) -> dt.tzinfo:
    if not name:
        return dt.timezone.utc
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"late policy: unknown time zone {name!r} (an IANA name such as Europe/Berlin)") from None


def instant(text: str, zone: dt.tzinfo) -> dt.datetime:
    """An ISO 8601 time (a date alone is the end of that day) as an aware datetime; one without an offset is
    read in ``zone``."""
    raw = text.strip()
    try:
        when = dt.datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith(("Z", "z")) else raw)
    except ValueError:
        raise UsageError(f"late policy: {text!r} is not a time (write it as 2025-10-20T23:59:00+02:00)") from None
    if len(raw) == 10:  # a date: all of that day, to its last microsecond
        when = when.replace(hour=23, minute=59, second=59, microsecond=999999)
    return when if when.tzinfo is not None else when.replace(tzinfo=zone)


def _shown(when: dt.datetime, policy: LatePolicy) -> str:
    return when.astimezone(policy.zone()).strftime("%Y-%m-%d %H:%M %z")


def _percent(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
        raise UsageError(f"late policy: {what} is a percentage in [0, 100]; got {value!r}")
    return float(value)


def policy_from_dict(data: dict) -> tuple[LatePolicy, str | None]:
    """(the policy, the extensions CSV it names or None); UsageError naming what is wrong."""
    if not isinstance(data, dict) or data.get("version") != POLICY_VERSION:
        raise UsageError(f'a late policy is a JSON object with "version": {POLICY_VERSION}')
    known = {"version", "due", "timezone", "grace_minutes", "penalty", "archive_timezone", "extensions"}
    if set(data) - known:
        raise UsageError(
            f"late policy: unknown key(s) {', '.join(sorted(set(data) - known))}; known: {', '.join(sorted(known))}"
        )
    if not isinstance(data.get("due"), str):
        raise UsageError('late policy: "due" (an ISO 8601 time) is required')
    zone, archive = str(data.get("timezone") or ""), str(data.get("archive_timezone") or "")
    instant(data["due"], _zone(zone)), _zone(archive)  # checked now, not when the first late notebook turns up
    grace = data.get("grace_minutes", 0)
    if isinstance(grace, bool) or not isinstance(grace, (int, float)) or not grace >= 0:
        raise UsageError(f"late policy: grace_minutes is a number of minutes >= 0; got {grace!r}")
    penalty = data.get("penalty")
    policy = LatePolicy(due=data["due"], timezone=zone, grace_minutes=float(grace), archive_timezone=archive)
    if isinstance(penalty, dict) and set(penalty) <= {"per_day", "floor"} and "per_day" in penalty:
        policy = replace(
            policy, per_day=_percent(penalty["per_day"], "per_day"), floor=_percent(penalty.get("floor", 0), "floor")
        )
    elif isinstance(penalty, dict) and set(penalty) <= {"windows", "then"} and isinstance(penalty.get("windows"), list):
        windows = []
        for w in penalty["windows"]:
            hours = w.get("hours") if isinstance(w, dict) else None
            if isinstance(hours, bool) or not isinstance(hours, (int, float)) or not hours > 0:
                raise UsageError(f'late policy: each window is {{"hours": H > 0, "credit": percent}}; got {w!r}')
            windows.append((float(hours), _percent(w.get("credit"), "a window's credit")))
        if not windows or [h for h, _ in windows] != sorted({h for h, _ in windows}):
            raise UsageError("late policy: windows need at least one window, in increasing hours")
        policy = replace(policy, windows=tuple(windows), then=_percent(penalty.get("then", 0), "then"))
    else:
        raise UsageError(
            'late policy: "penalty" is {"per_day": P, "floor": F} or '
            '{"windows": [{"hours": H, "credit": C}, ...], "then": C}'
        )
    extensions = data.get("extensions")
    if isinstance(extensions, dict):  # as a batch record stores it: resolved to student ids
        policy = replace(
            policy,
            extensions={str(s): Extension(str(e["due"]), str(e.get("reason", ""))) for s, e in extensions.items()},
        )
        return policy, None
    if extensions is not None and not isinstance(extensions, str):
        raise UsageError('late policy: "extensions" is the path of a CSV file (student, due, reason)')
    return policy, extensions or None


def load_policy(path: str | Path) -> tuple[LatePolicy, Path | None]:
    """The policy in the JSON file ``path`` and the extensions CSV it names (relative to the file)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the late policy {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None
    policy, extensions = policy_from_dict(data)
    return policy, (path.parent / extensions if extensions else None)


def course_policy(assignment: str, root: str | Path | None = None) -> tuple[LatePolicy, Path | None] | None:
    """The late policy the course config gives ``assignment`` (None when it gives none)."""
    if root is None:
        from grader.course import ASSIGNMENTS_ROOT as root  # imports no nbgrader
    path = Path(root) / COURSE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the course config {path}: {exc}") from None
    if (
        not isinstance(data, dict)
        or data.get("version") != COURSE_VERSION
        or not isinstance(data.get("assignments", {}), dict)
    ):
        raise UsageError(f"{path} is not a course config of version {COURSE_VERSION}")
    entry = data.get("assignments", {}).get(assignment) or {}
    if "late_policy" not in entry:
        return None
    policy, extensions = policy_from_dict(entry["late_policy"])
    return policy, (path.parent / extensions if extensions else None)


def read_extensions(path: str | Path, policy: LatePolicy, students: dict) -> tuple[LatePolicy, list[str]]:
    """``policy`` with the extensions of the CSV ``path`` (columns student, due, reason; a student by id,
    or by the name or email the export gives). A row naming several students or an unreadable time stops
    it (UsageError naming the row); a row naming nobody of this batch is skipped with a note."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the extensions {path}: {getattr(exc, 'strerror', None) or exc}") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip() for h in reader.fieldnames or []]
    if not {"student", "due"} <= set(header):
        raise UsageError(f"{path}: the header needs the columns {', '.join(EXTENSION_COLUMNS)}")
    reader.fieldnames = header
    extensions, notes = dict(policy.extensions), []
    for row_number, row in enumerate(reader, start=2):
        named = (row.get("student") or "").strip()
        if not named:
            continue
        try:
            student = resolve_student(students, named if named in students else unquoted(named))
        except StudentNotFound as exc:
            if exc.candidates:
                raise UsageError(f"{path}, row {row_number}: {exc}") from None
            notes.append(
                f"{path.name}, row {row_number}: no student {named!r} in this batch; the extension is not used"
            )
            continue
        due = (row.get("due") or "").strip()
        try:
            extended = instant(due, policy.zone())
        except UsageError as exc:
            raise UsageError(f"{path}, row {row_number}: {exc}") from None
        if extended < policy.due_time():
            line = reader.line_num  # the file's line that ends this row (rows are counted without blank lines)
            raise ExtensionRefused(
                path,
                line,
                text.splitlines()[line - 1] if line <= len(text.splitlines()) else "",
                f"the extension for {student!r} ends {_shown(extended, policy)}, before the assignment "
                f"is due ({_shown(policy.due_time(), policy)}): an extension only gives more time "
                f"(a typo in the date?)",
            )
        extensions[student] = Extension(due, unquoted((row.get("reason") or "").strip()))
    return replace(policy, extensions=extensions), notes


@dataclass(frozen=True)
class Assessment:
    charge: LateCharge | None = None  # None: on time, or the policy could not be applied
    decided: bool = False  # the policy judged a known submission time (the LMS's own late flag then says nothing)
    notes: tuple[str, ...] = ()  # for the TA


def _duration(delta: dt.timedelta) -> str:
    minutes = math.ceil(delta.total_seconds() / 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [
        f"{n} {unit}{'' if n == 1 else 's'}" for n, unit in ((days, "day"), (hours, "hour"), (minutes, "minute")) if n
    ]
    return " ".join(parts[:2]) or "0 minutes"


def credit_percent(policy: LatePolicy, late_by: dt.timedelta) -> float:
    """The credit kept by work handed in ``late_by`` after its due time (past any grace)."""
    if policy.per_day is not None:
        days = math.ceil(late_by / dt.timedelta(days=1))
        return max(policy.floor, 100.0 - policy.per_day * days)
    hours = late_by / dt.timedelta(hours=1)
    return next((credit for until, credit in policy.windows if hours <= until), policy.then)


def assess(policy: LatePolicy | None, student: str, who) -> Assessment:
    """What ``policy`` makes of the submission ``who`` (a batch record: its ``submitted`` time, where it came
    from, and the LMS's late flag)."""
    if policy is None or who is None or getattr(who, "no_notebook", ""):
        return Assessment()
    submitted, source = getattr(who, "submitted", ""), getattr(who, "submitted_from", "")
    if not submitted:
        if who.late:
            return Assessment(
                notes=(
                    "the LMS marked it late, but the export gives no submission time: the late "
                    "policy is not applied (folder layouts: pass --file-times)",
                )
            )
        return Assessment()
    archive = source == ARCHIVE_TIME and policy.archive_timezone
    try:
        when = instant(submitted, _zone(policy.archive_timezone) if archive else policy.zone())
    except UsageError:  # not judged on time: the row says so, and the TA decides (an extension, or the export's time)
        return Assessment(
            notes=(
                f"{UNREADABLE}: {submitted!r} ({source or 'the export'}) is not a time the late "
                f"policy can read, so it was not applied; give the student an extension row to "
                f"decide",
            )
        )
    extension = policy.extensions.get(student)
    due, grace = policy.due_time(student), dt.timedelta(minutes=policy.grace_minutes)
    given = (
        f"extended to {_shown(due, policy)}" + (f": {extension.reason}" if extension.reason else "")
        if extension
        else f"due {_shown(due, policy)}"
    )
    if when <= due + grace:
        if extension and when > policy.due_time() + grace:  # the extension explains an LMS's late flag too
            return Assessment(decided=True, notes=(f"on time by its extension ({given})",))
        if who.late:
            return Assessment(
                decided=True,
                notes=(
                    f"the LMS marked it late, but its time {_shown(when, policy)} ({source}) is on time under the late "
                    f"policy ({given}); check the policy's due time and archive_timezone",
                ),
            )
        return Assessment(decided=True)
    credit = credit_percent(policy, when - due)
    reason = (
        f"late by {_duration(when - due)} (submitted {_shown(when, policy)}, {source}; {given}): {credit:g}% credit"
    )
    return Assessment(LateCharge(credit / 100.0, reason), decided=True)


def batch_policy(
    path: str | None, extensions: str | None, assignment: str, students: dict
) -> tuple[LatePolicy | None, list[str]]:
    """The late policy a batch applies: the file ``path`` (else the course config's for ``assignment``), with
    the extensions of the CSV ``extensions`` (else of the file the policy names) resolved among ``students``
    (id -> something with the LMS's name and email). (None, []) when there is no policy."""
    found = load_policy(path) if path else course_policy(assignment)
    if found is None:
        if extensions:
            raise UsageError("--extensions needs a late policy (--late-policy FILE, or one in the course config)")
        return None, []
    policy, named = found
    table = extensions or named
    return read_extensions(table, policy, students) if table else (policy, [])
