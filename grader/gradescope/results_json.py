"""A graded notebook in Gradescope's results.json format: one test per check, named by its property.

Fields follow https://gradescope-autograders.readthedocs.io/en/latest/specs/ ("Output format"): a top-level
``score``, ``output`` and ``visibility``, and ``tests``, each with ``name``, ``number``, ``score``,
``max_score``, ``status`` ("passed" or "failed") and ``output``. A top-level score, when given, is the
submission's score (Gradescope would otherwise add up the tests'); here it is the notebook's own total.
"""

from __future__ import annotations

from grader.results import FLAG_WORDS, MANUAL_CHECK, CheckResult, NotebookResult


def _fmt(x: float) -> str:
    return f"{x:g}"


def summary_line(result: NotebookResult) -> str:
    text = (
        f"{_fmt(result.score)} of {_fmt(result.gradable_points)} automatically graded points "
        f"for {result.notebook} ({result.assignment})."
    )
    if result.bonus_points:
        text += (
            f" {_fmt(result.bonus_points)} of them are bonus points, on top of the "
            f"{_fmt(result.max_score)} points of a full score."
        )
    if result.pending_points:
        text += (
            f" {_fmt(result.pending_points)} more points are for written answers that course staff "
            f"grade by hand; they are not included here."
        )
    if result.reason:
        text += f" Note: {result.reason}"
    if result.chosen:
        text += f" Note: {result.chosen}."
    for flag in result.flags:
        text += f" Note: {FLAG_WORDS[flag]}."
    return text


def _staff_said(check: CheckResult) -> str:
    mark = check.staff
    said = f"{'Scored' if mark.kind == 'manual' else 'Points set'} by course staff" + (
        f": {mark.reason}" if mark.reason else "."
    )
    if mark.kind == "override":
        said += f" (the grader gave {_fmt(mark.grader_points)} of {_fmt(check.max_points)})"
        if check.message:
            said += f"\n{check.message}"
    return said


def results_from_notebook(result: NotebookResult, *, visibility: str, extra: dict | None = None) -> dict:
    """One test per check (property sentence, points, feedback), written answers pending or scored by staff.
    Rendered from the result alone: each check carries its sentence (``CheckResult.sentence``)."""
    tests = []
    for i, exercise in enumerate(result.exercises, start=1):
        for j, check in enumerate(exercise.checks, start=1):
            number = f"{i}.{j}"
            if check.pending:
                tests.append(
                    {
                        "name": f"{exercise.id}: written answer",
                        "number": number,
                        "score": 0,
                        "max_score": 0,
                        "status": "passed",
                        "output": f"Pending manual grading by course staff ({_fmt(check.max_points)} points, "
                        f"not part of this score).",
                    }
                )
                continue
            if check.staff is not None:
                passed, output = check.awarded >= check.max_points, _staff_said(check)
            else:
                passed = check.status == "passed" and check.points >= check.max_points
                output = check.message or ("passed" if passed else check.status)
            # a written answer (pending, scored by staff, or unanswered) has no sentence of its own
            name = "written answer" if check.name == MANUAL_CHECK else check.sentence or check.name
            # a bonus check is Gradescope's extra credit: it scores above its max_score of 0
            tests.append(
                {
                    "name": f"{exercise.id}{' (bonus)' if exercise.bonus else ''}: {name}",
                    "number": number,
                    "score": check.awarded,
                    "max_score": 0 if exercise.bonus else check.max_points,
                    "status": "passed" if passed else "failed",
                    "output": output,
                }
            )
    return {
        "score": result.score,
        "output": summary_line(result),
        "visibility": visibility,
        "tests": tests,
        "extra_data": {"seqgrade": extra or {}},
    }


def results_for_failure(reason: str, *, visibility: str = "visible", extra: dict | None = None) -> dict:
    """A valid results.json with score 0 when nothing could be graded, saying why."""
    return {
        "score": 0,
        "output": reason,
        "visibility": visibility,
        "tests": [],
        "extra_data": {"seqgrade": extra or {}},
    }
