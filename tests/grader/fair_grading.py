"""Grade one exercise of an assignment's solution notebook with some cells replaced, in-process and judged
as in a real grade (grader.judge): the helper the tests of issue 28's rules share."""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

from grader.assignments.registry import get_assignment
from grader.course.release import release
from grader.judge import judge_exercise
from grader.notebook import load_submission
from grader.results import ExerciseResult
from grader.sandbox.inprocess import InProcess

from ..corpus.courses import entries, replaced


@functools.cache
def solution_notebook(assignment: str) -> dict:
    """The released solution notebook of ``assignment``, as JSON."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = get_assignment(assignment)
        return json.loads((release(assignment, Path(tmp), solutions=True) / spec.notebook).read_text())


def student(assignment: str, replace: dict[str, str]) -> InProcess:
    """The solution with the cells named in ``replace`` (grade id -> source) replaced, run in-process."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "submission.ipynb"
        path.write_text(json.dumps(replaced(solution_notebook(assignment), replace)))
        cells = load_submission(path).cells
    code, reports = InProcess.from_cells(cells, get_assignment(assignment).modules)
    assert all(r["status"] == "ok" for r in reports), reports
    return code


def judged(assignment: str, exercise: str, source: str) -> ExerciseResult:
    """The result of ``exercise`` when its cell holds ``source``."""
    spec = get_assignment(assignment)
    return judge_exercise(spec.exercise(exercise), student(assignment, {exercise: source}))


def failed(result: ExerciseResult) -> list[str]:
    return [c.name for c in result.checks if c.status != "passed"]


def earned(result: ExerciseResult) -> dict[str, float]:
    return {c.name: c.points for c in result.checks if c.points}


def corpus_source(assignment: str, kind: str, name: str) -> str:
    """The one replaced cell of corpus entry ``kind/name`` of ``assignment`` (tests/corpus/courses/)."""
    (source,) = next(e for e in entries(assignment, kind) if e.name == name).data["REPLACE"].values()
    return source
