"""Frozen result records and their versioned JSON form.

A notebook's result holds one record per exercise, each holding one record per check. Scores are
kept as floats rounded to 1e-6 so the JSON text is stable across runs.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from .version import RESULT_SCHEMA_VERSION, __version__

CHECK_STATUSES = ("passed", "failed", "error", "timeout", "missing", "manual")
MANUAL_CHECK = "manual_review"  # the one check of a manual (free-text) question
MANUAL_MESSAGE = "graded by course staff"  # the message of a manual check (grader.checking.unrun.manual_result)
UNANSWERED_KIND = (
    "unanswered"  # the kind of a manual check whose answer cell is empty or exactly as released (0 points)
)
NOTEBOOK_STATUSES = ("graded", "invalid", "wrong_assignment")
# Facts about a submission that are not exercise results; a batch sets them (grades.csv's reason column).
NOTEBOOK_FLAGS = ("release_identical", "late")
# How each flag reads to a student or a TA (grades.csv's reason column, feedback pages, Gradescope).
FLAG_WORDS = {
    "release_identical": "unmodified release detected (the notebook is the released one, unchanged)",
    "late": "late (the LMS marked the submission late)",
}


def _points(x: float) -> float:
    return round(float(x), 6) + 0.0  # + 0.0 turns -0.0 into 0.0


# How a failure message introduces the code that reproduces its call (grader.checking.reproduce writes it,
# the feedback page sets it apart).
SNIPPET_HEADING = "To reproduce this call in your notebook, run:"


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: str
    points: float
    max_points: float
    message: str = ""
    # Optional picture data for the report (e.g. a causality influence matrix), plain lists only.
    figure: dict | None = None
    kind: str = ""  # why it did not pass (grader.checking.kinds.FAILURE_KINDS); "" when it passed or is manual
    # Points set by course staff (a manual score or an override), applied after grading; see StaffMark.
    staff: "StaffMark | None" = None
    # What the check checks, the first line of its docstring (grader.checking.exercise.Check.property): the
    # result carries it so that a page is rendered from the result alone, without importing the checks.
    sentence: str = ""

    def __post_init__(self):
        if self.status not in CHECK_STATUSES:
            raise ValueError(f"unknown check status {self.status!r}")
        object.__setattr__(self, "points", _points(self.points))
        object.__setattr__(self, "max_points", _points(self.max_points))
        if isinstance(self.staff, dict):
            object.__setattr__(self, "staff", StaffMark(**self.staff))

    @property
    def pending(self) -> bool:
        """A manual question nobody has scored yet: its points are pending, not zero."""
        return self.status == "manual" and self.staff is None

    @property
    def awarded(self) -> float:
        """The points that count: the staff's where they set them, else the grader's."""
        return self.staff.points if self.staff is not None else self.points


@dataclass(frozen=True)
class StaffMark:
    """Points a TA set for one check of one student, with the reason shown to the student.

    ``kind`` is "manual" (a score for a free-text question) or "override" (replacing what the grader
    gave a check); ``grader_points`` keeps what the grader itself gave, so the page can show both."""

    kind: str
    points: float
    reason: str = ""
    by: str = ""
    grader_points: float = 0.0

    def __post_init__(self):
        if self.kind not in ("manual", "override"):
            raise ValueError(f"unknown staff mark kind {self.kind!r}")
        object.__setattr__(self, "points", _points(self.points))
        object.__setattr__(self, "grader_points", _points(self.grader_points))


@dataclass(frozen=True)
class LateCharge:
    """What a late policy made of a submission's time, applied after grading: the notebook's total is its
    points times ``credit`` (staff marks included). ``reason`` says why, for the TA and the student."""

    credit: float  # the share of the points kept, in [0, 1]
    reason: str

    def __post_init__(self):
        if not 0 <= self.credit <= 1:
            raise ValueError(f"a late credit is a share in [0, 1]; got {self.credit!r}")


@dataclass(frozen=True)
class ExerciseResult:
    id: str
    checks: tuple[CheckResult, ...]
    max_score: float
    manual: bool = False
    root_cause: str = ""  # the first thing that went wrong, named first in the feedback ("" when all passed)
    bonus: bool = False  # its points come on top of the notebook's maximum (grader.checking.exercise.Exercise.bonus)

    @property
    def score(self) -> float:
        return _points(sum(c.awarded for c in self.checks))

    @property
    def pending_points(self) -> float:
        """Points of manual questions not scored yet."""
        return _points(sum(c.max_points for c in self.checks if c.pending))

    @property
    def status(self) -> str:
        statuses = {c.status for c in self.checks}
        for status in ("manual", "missing", "timeout", "error", "failed"):
            if status in statuses:
                return status
        return "passed"


@dataclass(frozen=True)
class NotebookResult:
    assignment: str
    notebook: str
    status: str
    exercises: tuple[ExerciseResult, ...] = ()
    reason: str = ""
    max_score: float = 0.0
    cells: tuple[dict, ...] = field(default=())  # per-cell execution notes: index, status, message
    flags: tuple[str, ...] = ()  # NOTEBOOK_FLAGS that apply, in that order
    late: LateCharge | None = None  # a batch's late policy applied to this submission (never by the grader)
    chosen: str = ""  # of several notebooks handed in, which one a batch graded and which not ("" for one)

    def __post_init__(self):
        if self.status not in NOTEBOOK_STATUSES:
            raise ValueError(f"unknown notebook status {self.status!r}")
        unknown = [f for f in self.flags if f not in NOTEBOOK_FLAGS]
        if unknown:
            raise ValueError(f"unknown notebook flag(s) {unknown!r}; known: {', '.join(NOTEBOOK_FLAGS)}")
        object.__setattr__(self, "max_score", _points(self.max_score))
        object.__setattr__(self, "flags", tuple(f for f in NOTEBOOK_FLAGS if f in self.flags))
        if isinstance(self.late, dict):
            object.__setattr__(self, "late", LateCharge(**self.late))

    @property
    def points(self) -> float:
        """The points of the exercises (the grader's, or staff marks where set), bonus points included, before
        any late charge: a notebook with bonus points may score more than its ``max_score``."""
        return _points(sum(e.score for e in self.exercises))

    @property
    def bonus_points(self) -> float:
        """The points earned in bonus exercises (part of ``points``, never of ``max_score``)."""
        return _points(sum(e.score for e in self.exercises if e.bonus))

    @property
    def has_bonus(self) -> bool:
        return any(e.bonus for e in self.exercises)

    @property
    def score(self) -> float:
        """The total that counts: the points, scaled by the late charge when one applies."""
        return self.points if self.late is None else _points(self.points * self.late.credit)

    @property
    def pending_points(self) -> float:
        """Points still waiting for a TA (manual questions not scored yet)."""
        return _points(sum(e.pending_points for e in self.exercises))

    @property
    def gradable_points(self) -> float:
        """The points a score can be given for now: the maximum minus what is pending."""
        return _points(self.max_score - self.pending_points)

    def exercise(self, exercise_id: str) -> ExerciseResult:
        for e in self.exercises:
            if e.id == exercise_id:
                return e
        raise KeyError(exercise_id)

    def to_dict(self) -> dict:
        return {
            "version": RESULT_SCHEMA_VERSION,
            "grader_version": __version__,
            "assignment": self.assignment,
            "notebook": self.notebook,
            "status": self.status,
            "reason": self.reason,
            "score": self.score,
            "max_score": self.max_score,
            **({"bonus_points": self.bonus_points} if self.has_bonus else {}),
            "pending_points": self.pending_points,
            "flags": list(self.flags),
            "exercises": [
                {
                    "id": e.id,
                    "score": e.score,
                    "max_score": _points(e.max_score),
                    "status": e.status,
                    "root_cause": e.root_cause,
                    **({"bonus": True} if e.bonus else {}),
                    "checks": [
                        {k: v for k, v in asdict(c).items() if k not in ("figure", "staff") or v is not None}
                        for c in e.checks
                    ],
                }
                for e in self.exercises
            ],
            "cells": list(self.cells),
            **({"late": asdict(self.late)} if self.late is not None else {}),
            **({"chosen": self.chosen} if self.chosen else {}),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False, allow_nan=False) + "\n"

    @classmethod
    def from_dict(cls, data: dict) -> "NotebookResult":
        if data.get("version") != RESULT_SCHEMA_VERSION:
            raise ValueError(f"unsupported result version {data.get('version')!r}")
        exercises = tuple(
            ExerciseResult(
                id=e["id"],
                max_score=e["max_score"],
                manual=any(c["status"] == "manual" for c in e["checks"]),
                root_cause=e.get("root_cause", ""),
                bonus=bool(e.get("bonus", False)),
                checks=tuple(CheckResult(**c) for c in e["checks"]),
            )
            for e in data["exercises"]
        )
        return cls(
            assignment=data["assignment"],
            notebook=data["notebook"],
            status=data["status"],
            exercises=exercises,
            reason=data.get("reason", ""),
            max_score=data["max_score"],
            cells=tuple(data.get("cells", ())),
            flags=tuple(data.get("flags", ())),
            late=data.get("late"),
            chosen=data.get("chosen", ""),
        )
