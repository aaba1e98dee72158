"""Scores for nbgrader's autograded cells: ``score("seq2col", globals())`` returns a plain float.

nbgrader runs hidden test cells in the student's own kernel, so this path has nbgrader's trust model
(the student's earlier cells share the process); use ``seqgrade grade``/``batch`` for isolation. The
checks are the same as seqgrade's, so the per-exercise scores agree. nbgrader gives a cell 0 if
anything reaches stderr, so warnings and stderr (also at the file-descriptor level) are silenced while
the checks run, exceptions are contained, and the score is clipped to [0, points]. A bonus exercise's cell is
worth 0 points in nbgrader, so it scores 0 here; its points are nbgrader's extra credit (``seqgrade batch``
writes them into the gradebook).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import warnings

from grader.assignments.registry import get_assignment
from grader.sandbox.inprocess import InProcess

from .judge import judge_exercise


@contextlib.contextmanager
def _quiet():
    sink = io.StringIO()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        with warnings.catch_warnings(), contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
            warnings.simplefilter("ignore")
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def score(exercise_id: str, namespace: dict, assignment: str = "sequence_models") -> float:
    course = get_assignment(assignment)
    exercise = course.exercise(exercise_id)
    total = 0.0
    try:
        with _quiet():
            result = judge_exercise(
                exercise, InProcess(namespace), others=[e.id for e in course.exercises if e.kind == "function"]
            )
            total = result.score
            for c in result.checks:
                print(f"{c.name}: {c.status} {c.points:g}/{c.max_points:g} {c.message}")
    except BaseException:  # nothing may escape into the cell's outputs
        pass
    if not math.isfinite(total):
        return 0.0
    # a bonus's cell is worth 0 points in nbgrader (a score above a cell's points fails the whole submission):
    # its points reach nbgrader's gradebook as extra credit, written by `seqgrade batch --db` (or typed in formgrader)
    return float(round(min(max(total, 0.0), exercise.max_points), 6))
