"""``OUTDIR/batch.json``: what a batch knew about its submissions, so later commands (manual export and
import, overrides, LMS export) can rewrite every output without the submissions at hand.

Per student: the notebook's file name, the LMS's name, email and late flag, the submission time the
export gives (and where it comes from), the free-text answers of the manual questions (read from the
notebook JSON, never executed), which of them are left as released or empty, whether the notebook is the
unchanged release and the digest of its code cells; for the batch, the late policy in force
(``grader.batch.late``). Versioned JSON, written atomically (versions 1, without times and policy, and 2,
without unanswered questions and code digests, are still read).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from grader.errors import UsageError
from grader.fsutil import write_atomic
from grader.results import NotebookResult

if TYPE_CHECKING:  # the registry imports torch: commands that only read OUTDIR stay quick
    from grader.assignments.registry import Assignment

RECORD_FILE = "batch.json"
# StudentRecord.no_notebook of a submission the export lists with no file at all (a slash: no file has that name)
NO_FILES = "/ (no files)"
RECORD_SCHEMA_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
LMS_FORMATS = ("canvas", "gradescope")


def check_storable_db_url(url: str | None) -> None:
    """A gradebook URL is kept in OUTDIR/batch.json for later commands to write to: refuse one that holds
    a password (the message does not repeat it)."""
    from urllib.parse import urlsplit

    try:
        password = urlsplit(url or "").password
    except ValueError:
        password = None
    if password:
        raise UsageError(
            "--db: leave the password out of the gradebook URL; seqgrade keeps the URL in "
            "OUTDIR/batch.json for later commands, where anyone who can read OUTDIR would see it. "
            "Give the password the way your database's client library reads it (PostgreSQL: "
            "~/.pgpass or PGPASSWORD)"
        )


@dataclass(frozen=True)
class StudentRecord:
    notebook: str  # the submitted file's name
    name: str = ""
    email: str = ""
    late: bool = False
    release_identical: bool = False
    answers: dict = field(default_factory=dict)  # manual question id -> text
    no_notebook: str = ""  # what the student handed in instead of a notebook ("" when a notebook was graded)
    submitted: str = ""  # ISO 8601 time the export gives ("" when none; a Canvas file time has no offset)
    submitted_from: str = ""  # where that time comes from, in words
    unanswered: tuple = ()  # manual questions whose answer cell is empty or exactly as released (0 points, not pending)
    code_sha256: str = ""  # digest of the notebook's code cells (facts.code_digest; "" when not known)
    chosen: str = ""  # of several notebooks handed in, which one is graded and which not (grader.batch.choice)

    @property
    def flags(self) -> tuple[str, ...]:
        return (("release_identical",) if self.release_identical else ()) + (("late",) if self.late else ())


def no_notebook_reason(handed_in: str) -> str:
    """The reason on the row of a student who handed in no notebook: ``handed_in`` names the files they did
    hand in (StudentRecord.no_notebook), or is NO_FILES."""
    if handed_in == NO_FILES:
        return "no notebook handed in: the submission has no files"
    return f"no notebook handed in: {handed_in} is not a notebook (.ipynb)"


def gradebook_url(db_url: str, outdir: str | Path) -> str:
    """The gradebook a batch writes: ``db_url`` (``--db``), else gradebook.db in its output folder."""
    return db_url or f"sqlite:///{(Path(outdir) / 'gradebook.db').resolve()}"


@dataclass(frozen=True)
class BatchRecord:
    assignment: str
    layout: str
    db_url: str  # "" for the default, OUTDIR/gradebook.db (so OUTDIR can be moved)
    gradescope: bool = False
    lms: str = ""  # "", "canvas" or "gradescope": also write the LMS's import CSV
    students: dict = field(default_factory=dict)  # student id -> StudentRecord
    skipped: tuple = ()  # (path, reason) of files that were not graded
    late_policy: dict = field(default_factory=dict)  # LatePolicy.to_dict() of the policy in force ({}: none)

    def gradebook_url(self, outdir: str | Path) -> str:
        return gradebook_url(self.db_url, outdir)

    def to_json(self) -> str:
        data = {"version": RECORD_SCHEMA_VERSION, **asdict(self)}
        data["skipped"] = [list(s) for s in self.skipped]
        for student in data["students"].values():
            if not student["chosen"]:
                del student["chosen"]  # only where several notebooks were handed in: other records stay as they were
        return json.dumps(data, indent=2, allow_nan=False, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: dict) -> "BatchRecord":
        if data.get("version") not in READABLE_VERSIONS:
            raise ValueError(f"unsupported batch record version {data.get('version')!r}")
        return cls(
            assignment=data["assignment"],
            layout=data["layout"],
            db_url=data["db_url"],
            gradescope=bool(data.get("gradescope")),
            lms=data.get("lms", ""),
            students={
                k: StudentRecord(**{**v, "unanswered": tuple(v.get("unanswered", ()))})
                for k, v in data["students"].items()
            },
            skipped=tuple(tuple(s) for s in data.get("skipped", ())),
            late_policy=data.get("late_policy") or {},
        )

    def policy(self):
        """The late policy in force (a ``grader.batch.late.LatePolicy``), or None."""
        from .late import policy_from_dict

        return policy_from_dict(self.late_policy)[0] if self.late_policy else None


def write_record(outdir: str | Path, record: BatchRecord) -> None:
    write_atomic(Path(outdir) / RECORD_FILE, record.to_json())


def read_record(outdir: str | Path) -> BatchRecord:
    """The record of the batch graded into ``outdir``; UsageError when there is none (run `seqgrade batch` first)."""
    path = Path(outdir) / RECORD_FILE
    try:
        return BatchRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise UsageError(
            f"{outdir} holds no graded batch ({RECORD_FILE} is missing); run `seqgrade batch ... --out {outdir}` first"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None


def check_outdir_assignment(outdir: str | Path, assignment_id: str) -> None:
    """UsageError when ``outdir`` holds a batch of another assignment: its grades, pages and staff marks would be
    mixed with this one's (a folder per assignment; a record that cannot be read is written anew)."""
    if not (Path(outdir) / RECORD_FILE).is_file():
        return
    try:
        there = read_record(outdir).assignment
    except UsageError:
        return
    if there != assignment_id:
        raise UsageError(
            f"{outdir} holds the graded batch of {there} (its grades, feedback and staff marks); "
            f"grade {assignment_id} into another folder"
        )


def missing_result(assignment: Assignment, notebook: str, reason: str) -> NotebookResult:
    """An 'invalid' result with every check at 0 (manual questions pending), for a student whose
    notebook could not be graded or who handed in none."""
    from grader.checking.unrun import uniform_result

    exercises = [uniform_result(e, "missing", reason, "not_graded") for e in assignment.exercises]
    return NotebookResult(
        assignment=assignment.id,
        notebook=notebook,
        status="invalid",
        reason=reason,
        exercises=assignment.described(exercises),
        max_score=assignment.max_score,
    )
