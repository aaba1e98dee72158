"""What an audit worker does for one notebook (the solution or one mutant): grade it (in the sandbox through
the batch's worker, or in this process), run its self-checks, and for a survivor compare its answers with
the solution's. Jobs and payloads are plain versioned dicts, so a process pool or a Dask cluster can carry
them; each worker process keeps its grader, its self-check module and the solution's answers."""

from __future__ import annotations

from pathlib import Path

from grader.jail.limits import Limits

from .model import AUDIT_SCHEMA_VERSION
from .recording import Recorder, recording, same_answers
from .selfchecks import OutOfTime, load_selfcheck_module, run_selfchecks, run_selfchecks_apart, time_budget

SOLUTION = "solution"  # the job id of the solution itself
GRADE_BUDGET_S = 300.0  # in-process grading has no call limits: this stops a mutant that never returns
SELFCHECK_BUDGET_S = 60.0

_MODULES: dict[str, object] = {}  # release folder -> its selfcheck module
_ANSWERS: dict[tuple[str, str], list] = {}  # (solution notebook, exercise) -> what the solution answered


def job(
    mutant: str,
    exercise: str,
    notebook: Path,
    folder: Path,
    assignment: str,
    backend: str,
    limits: Limits,
    solution: Path,
) -> dict:
    return {
        "version": AUDIT_SCHEMA_VERSION,
        "mutant": mutant,
        "exercise": exercise,
        "notebook": str(notebook),
        "folder": str(folder),
        "assignment": assignment,
        "backend": backend,
        "limits": limits,
        "solution": str(solution),
    }


def _assignment(name: str, given):
    if given is not None:
        return given
    from grader.assignments.registry import get_assignment

    return get_assignment(name)


def _in_process(assignment, notebook: str, record: str = ""):
    """Grade ``notebook`` here; with ``record``, only that exercise, its calls recorded: (result, calls)."""
    from grader.grading import grade_exercises, missing_explainer
    from grader.judge import judge_exercise
    from grader.notebook import load_submission
    from grader.results import NotebookResult
    from grader.sandbox.inprocess import InProcess

    submission = load_submission(notebook)
    student, reports = InProcess.from_cells(submission.cells, assignment.modules)
    explain = missing_explainer(submission, reports)
    if record:
        recorder = Recorder(student)
        graded = [e.id for e in assignment.exercises if e.kind == "function"]
        judge_exercise(assignment.exercise(record), recorder, explain, graded)
        return None, recorder.calls
    exercises = grade_exercises(assignment, student, explain)
    return NotebookResult(
        assignment=assignment.id,
        notebook=Path(notebook).name,
        status="graded",
        exercises=exercises,
        max_score=assignment.max_score,
        cells=tuple(reports),
    ), None


def _grade(spec: dict, assignment) -> dict:
    if spec["backend"] == "sandbox":
        from grader.batch.worker import grade_job

        graded = grade_job(spec["mutant"], spec["notebook"], spec["assignment"], spec["limits"], ())
        if graded["error"]:
            raise RuntimeError(graded["error"])
        return graded["result"]
    with time_budget(GRADE_BUDGET_S):
        return _in_process(assignment, spec["notebook"])[0].to_dict()


def _answers(assignment, notebook: str, exercise: str) -> list:
    with time_budget(GRADE_BUDGET_S):
        return _in_process(assignment, notebook, record=exercise)[1]


def _scores(result: dict) -> dict:
    return {e["id"]: e["score"] for e in result["exercises"]}


def run_job(spec: dict, assignment=None) -> dict:
    """Audit one notebook; ``assignment``: the Assignment object to grade with (else the registry's, by id)."""
    try:
        return _run(spec, _assignment(spec["assignment"], assignment))
    except (Exception, OutOfTime) as exc:  # the audit's own failure on this notebook: recorded, never fatal
        return {"version": AUDIT_SCHEMA_VERSION, "mutant": spec["mutant"], "error": f"{type(exc).__name__}: {exc}"}


def _run(spec: dict, assignment) -> dict:
    result = _grade(spec, assignment)
    folder = spec["folder"]
    if folder not in _MODULES:
        _MODULES[folder] = load_selfcheck_module(Path(folder))
    after = "" if spec["mutant"] == SOLUTION else spec["exercise"]
    # Apart from the worker where the mutant is graded in the sandbox (a pool worker: one thread, safe to fork);
    # in-process grading has already run the mutant's code here, so there is nothing left to protect.
    run = run_selfchecks_apart if spec["backend"] == "sandbox" else run_selfchecks
    verdict = run(Path(spec["notebook"]), _MODULES[folder], after=after, budget_s=SELFCHECK_BUDGET_S)
    exercise = {e["id"]: e for e in result["exercises"]}.get(spec["exercise"])
    payload = {
        "version": AUDIT_SCHEMA_VERSION,
        "mutant": spec["mutant"],
        "error": "",
        "scores": _scores(result),
        "failed": [c["name"] for c in exercise["checks"] if c["status"] != "passed"] if exercise else [],
        "passed": [c["name"] for c in exercise["checks"] if c["status"] == "passed"] if exercise else [],
        "selfcheck": {"status": verdict.status, "cell": verdict.cell, "message": verdict.message},
        "equivalent": None,
    }
    if exercise and spec["mutant"] != SOLUTION and exercise["score"] >= exercise["max_score"] - 1e-9:
        key = (spec["solution"], spec["exercise"])
        if key not in _ANSWERS:
            _ANSWERS[key] = _answers(assignment, spec["solution"], spec["exercise"])
        payload["equivalent"] = same_answers(_answers(assignment, spec["notebook"], spec["exercise"]), _ANSWERS[key])
    return payload


def selfcheck_calls(notebook: Path, folder: Path, names: list[str]) -> list[tuple[str, str, str, object]]:
    """The calls the self-check cells make to the graded functions ``names`` on the solution:
    (name, digest of the arguments, the call as text, what it returned)."""
    log: list = []
    active: list = []  # [True] while a self-check cell runs: calls from the notebook's own cells do not count

    def wrap(ns: dict, selfcheck: bool) -> None:
        active[:] = [True] if selfcheck else []
        for name in names:
            function = ns.get(name)
            if callable(function) and not getattr(function, "_audit_recorded", False):
                ns[name] = recording(function, name, log, active)
                ns[name]._audit_recorded = True

    run_selfchecks(notebook, load_selfcheck_module(folder), wrap=wrap, budget_s=SELFCHECK_BUDGET_S)
    return log
