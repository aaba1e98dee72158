"""Grade one notebook end to end: read it, run it in a backend, run every check, build the result."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Callable, Sequence

from grader.assignments.registry import ASSIGNMENTS, Assignment, get_assignment
from grader.checking.calls import StudentAborted
from grader.jail.limits import Limits
from grader.sandbox.inprocess import InProcess

from .checking import drawn
from .errors import InvalidNotebook, UsageError
from .judge import judge_exercise, uniform_result
from .notebook import Submission, defining_cells, load_submission
from .results import ExerciseResult, NotebookResult


def infer_assignment(path: str | Path, declared: str | None) -> Assignment:
    """The assignment named by the notebook's metadata, else by its file name, else the only one there is."""
    for candidate in (declared, Path(path).stem):
        if candidate in ASSIGNMENTS:
            return ASSIGNMENTS[candidate]
    if len(ASSIGNMENTS) == 1:
        return next(iter(ASSIGNMENTS.values()))
    raise UsageError(f"cannot tell which assignment {path} belongs to; pass --assignment")


def _all_checks(assignment: Assignment, status: str, message: str, kind: str = "missing") -> tuple[ExerciseResult, ...]:
    return assignment.described([uniform_result(e, status, message, kind) for e in assignment.exercises])


def grade_exercises(assignment: Assignment, student, explain_missing=lambda name: "") -> tuple[ExerciseResult, ...]:
    graded = [e.id for e in assignment.exercises if e.kind == "function"]  # each served while another is graded
    return assignment.described(
        [judge_exercise(exercise, student, explain_missing, graded) for exercise in assignment.exercises]
    )


def missing_explainer(submission: Submission, reports) -> Callable[[str], str]:
    """Why a name is undefined, from the grader's own reading of the cells and the cell reports."""
    definers = defining_cells(submission.cells)
    by_index = {r["index"]: r for r in reports}

    def explain(name: str) -> str:
        cells = definers.get(name, [])
        if not cells:
            return f"no cell defines {name}; keep the name the exercise gives"
        bad = [by_index[i] for i in cells if by_index.get(i, {}).get("status", "ok") != "ok"]
        if not bad:
            return ""
        report = bad[-1]
        return f"the cell that defines it (cell {report['index']}) did not run: {report['message']}"

    return explain


class Grader:
    """Grades notebooks one after another. The sandbox backend keeps one pre-loaded zygote alive: its own
    (``launched`` already, or started now), or one that another process owns (``shared_zygote``: that
    zygote's control socket, grader.batch.pool.SharedZygote)."""

    def __init__(
        self,
        limits: Limits = Limits(),
        *,
        backend: str = "sandbox",
        slot: int | None = None,
        hide: Sequence[str] = (),
        launched=None,
        rootless: bool = False,
        shared_zygote=None,
        cpu_index: int | None = None,
    ):
        if backend not in ("sandbox", "inprocess"):
            raise UsageError(f"unknown backend {backend!r}")
        # The modules imported by now (torch, the checks) live as long as the process: keep the collector
        # from walking them during grading, and the interpreter from freeing them one by one at exit.
        gc.freeze()
        self.limits, self.backend = limits, backend
        self._zygote = None
        self._slot, self._hide = slot, tuple(hide)
        self._cpu_index = cpu_index  # which CPU its notebooks are graded on (grader.sandbox.cpus.cpu_for)
        if backend == "sandbox":
            from grader.sandbox.jails import Zygote, check_isolation

            check_isolation(limits.isolation, rootless=rootless)
            self._zygote = Zygote(
                slot=slot, hide=self._hide, launched=launched, rootless=rootless, shared=shared_zygote
            )

    def wait_ready(self) -> None:
        """Return once the sandbox's zygote has imported what it needs (at once for the in-process backend)."""
        if self._zygote is not None:
            self._zygote.wait_ready()

    def zygote_gone(self) -> bool:
        """Its sandbox's zygote has ended (so every further notebook would fail with SandboxError)."""
        return self._zygote is not None and self._zygote.gone()

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

    def grade(
        self,
        path: str | Path,
        assignment: str | None = None,
        *,
        display_name: str | None = None,
        limits: Limits | None = None,
    ) -> NotebookResult:
        """Grade one notebook; ``limits``: other limits than the grader's for this notebook only (the
        zygote serves any limits; a different isolation level is checked first)."""
        if limits is not None and limits != self.limits:
            if self._zygote is not None and limits.isolation != self.limits.isolation:
                from grader.sandbox.jails import check_isolation

                check_isolation(limits.isolation, rootless=self._zygote.rootless)
            saved, self.limits = self.limits, limits
            try:
                return self.grade(path, assignment, display_name=display_name)
            finally:
                self.limits = saved
        name = display_name or Path(path).name
        try:
            submission = load_submission(path)
        except InvalidNotebook as exc:
            target = get_assignment(assignment) if assignment else infer_assignment(path, None)
            return NotebookResult(
                assignment=target.id,
                notebook=name,
                status="invalid",
                reason=str(exc),
                exercises=_all_checks(target, "missing", f"the notebook could not be read: {exc}", "not_graded"),
                max_score=target.max_score,
            )
        target = get_assignment(assignment) if assignment else infer_assignment(path, submission.assignment)
        if submission.assignment and submission.assignment != target.id:
            reason = f"this notebook belongs to assignment {submission.assignment!r}, not {target.id!r}"
            return NotebookResult(
                assignment=target.id,
                notebook=name,
                status="wrong_assignment",
                reason=reason,
                exercises=_all_checks(target, "missing", reason, "not_graded"),
                max_score=target.max_score,
            )
        result = self._grade_submission(submission, target, name)
        drawn.save()  # cases drawn for the first time in this process, for the next one
        return result

    def _grade_submission(self, submission: Submission, target: Assignment, name: str) -> NotebookResult:
        if self._zygote is None:
            student, reports = InProcess.from_cells(submission.cells, target.modules)
            exercises = grade_exercises(target, student, missing_explainer(submission, reports))
        else:
            from grader.sandbox.client import Session
            from grader.sandbox.cpus import cpu_for, pinned

            cpu = cpu_for(self._cpu_index)  # this thread and its jails take turns: one CPU (they are spawned from it)
            session = Session(self._zygote, submission.cells, self.limits, target.modules, target.call_budgets)
            with pinned(cpu):
                try:
                    try:
                        session.open()
                    except StudentAborted as exc:
                        exercises = _all_checks(
                            target, exc.status, f"the notebook could not be run: {exc.message}", exc.kind
                        )
                    else:
                        exercises = grade_exercises(target, session, missing_explainer(submission, session.reports()))
                    reports = session.reports()
                finally:
                    session.close()
        return NotebookResult(
            assignment=target.id,
            notebook=name,
            status="graded",
            exercises=exercises,
            reason="; ".join(submission.notes),
            max_score=target.max_score,
            cells=tuple(reports),
        )


def grade_notebook(
    path, assignment: str | None = None, limits: Limits = Limits(), backend: str = "sandbox"
) -> NotebookResult:
    with Grader(limits, backend=backend) as grader:
        return grader.grade(path, assignment)
