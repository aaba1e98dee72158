"""Grade one notebook end to end: read it, run it in a backend, run every check, build the result."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .backends.inprocess import InProcess
from .calls import StudentAborted
from .checks.base import run_check
from .errors import InvalidNotebook, UsageError
from .notebook import Submission, load_submission
from .registry import ASSIGNMENTS, Assignment, get_assignment
from .results import CheckResult, ExerciseResult, NotebookResult
from .sandbox.limits import Limits


def infer_assignment(path: str | Path, declared: str | None) -> Assignment:
    """The assignment named by the notebook's metadata, else by its file name, else the only one there is."""
    for candidate in (declared, Path(path).stem):
        if candidate in ASSIGNMENTS:
            return ASSIGNMENTS[candidate]
    if len(ASSIGNMENTS) == 1:
        return next(iter(ASSIGNMENTS.values()))
    raise UsageError(f"cannot tell which assignment {path} belongs to; pass --assignment")


def _all_checks(assignment: Assignment, status: str, message: str) -> tuple[ExerciseResult, ...]:
    return tuple(
        ExerciseResult(
            id=e.id, max_score=e.points, manual=e.kind == "manual",
            checks=(CheckResult(name="manual_review", status="manual", points=0, max_points=e.points,
                                message="graded by course staff"),) if e.kind == "manual" else
            tuple(CheckResult(name=c.name, status=status, points=0, max_points=c.points, message=message) for c in e.checks),
        )
        for e in assignment.exercises
    )


def grade_exercises(assignment: Assignment, student) -> tuple[ExerciseResult, ...]:
    results = []
    for exercise in assignment.exercises:
        if exercise.kind == "manual":
            checks = (CheckResult(name="manual_review", status="manual", points=0, max_points=exercise.points,
                                  message="graded by course staff"),)
        else:
            checks = tuple(run_check(c.name, c.func, c.points, student, c.hint) for c in exercise.checks)
        results.append(ExerciseResult(id=exercise.id, checks=checks, max_score=exercise.points,
                                      manual=exercise.kind == "manual"))
    return tuple(results)


class Grader:
    """Grades notebooks one after another. The sandbox backend keeps one pre-loaded zygote alive."""

    def __init__(self, limits: Limits = Limits(), *, backend: str = "sandbox", slot: int = 0, hide: Sequence[str] = (),
                 launched=None, rootless: bool = False):
        if backend not in ("sandbox", "inprocess"):
            raise UsageError(f"unknown backend {backend!r}")
        self.limits, self.backend = limits, backend
        self._zygote = None
        self._slot, self._hide = slot, tuple(hide)
        if backend == "sandbox":
            from .sandbox.client import Zygote, check_isolation
            check_isolation(limits.isolation, rootless=rootless)
            self._zygote = Zygote(slot=slot, hide=self._hide, launched=launched, rootless=rootless)

    def set_hidden(self, hide: Sequence[str]) -> None:
        if self._zygote is not None:
            self._zygote.set_hidden(hide)

    def close(self) -> None:
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def grade(self, path: str | Path, assignment: str | None = None, *, display_name: str | None = None) -> NotebookResult:
        name = display_name or Path(path).name
        try:
            submission = load_submission(path)
        except InvalidNotebook as exc:
            target = get_assignment(assignment) if assignment else infer_assignment(path, None)
            return NotebookResult(assignment=target.id, notebook=name, status="invalid", reason=str(exc),
                                  exercises=_all_checks(target, "missing", f"the notebook could not be read: {exc}"),
                                  max_score=target.max_score)
        target = get_assignment(assignment) if assignment else infer_assignment(path, submission.assignment)
        if submission.assignment and submission.assignment != target.id:
            reason = f"this notebook belongs to assignment {submission.assignment!r}, not {target.id!r}"
            return NotebookResult(assignment=target.id, notebook=name, status="wrong_assignment", reason=reason,
                                  exercises=_all_checks(target, "missing", reason), max_score=target.max_score)
        return self._grade_submission(submission, target, name)

    def _grade_submission(self, submission: Submission, target: Assignment, name: str) -> NotebookResult:
        if self._zygote is None:
            student, reports = InProcess.from_cells(submission.cells)
            exercises = grade_exercises(target, student)
        else:
            from .sandbox.client import Session
            session = Session(self._zygote, submission.cells, self.limits)
            try:
                try:
                    session.open()
                except StudentAborted as exc:
                    exercises = _all_checks(target, exc.status, f"the notebook could not be run: {exc.message}")
                else:
                    exercises = grade_exercises(target, session)
                reports = session.reports()
            finally:
                session.close()
        return NotebookResult(assignment=target.id, notebook=name, status="graded", exercises=exercises,
                              reason="; ".join(submission.notes), max_score=target.max_score, cells=tuple(reports))


def grade_notebook(path, assignment: str | None = None, limits: Limits = Limits(), backend: str = "sandbox") -> NotebookResult:
    with Grader(limits, backend=backend) as grader:
        return grader.grade(path, assignment)

