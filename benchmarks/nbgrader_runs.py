"""nbgrader on the same notebooks as seqgrade, for the benchmarks: a course made from assignments/, then
``nbgrader autograde`` and ``generate_feedback`` in a fresh copy of it, each measured from process start."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from measure import Measured, measure

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "sequence_models"
NBGRADER = [sys.executable, "-m", "nbgrader"]


def nbgrader_course(work: Path) -> Path:
    """A course made from assignments/ with the release generated (not timed: done once per assignment)."""
    course = work / "course"
    shutil.copytree(
        ROOT / "assignments",
        course,
        ignore=shutil.ignore_patterns(
            "__pycache__", "release", "submitted", "autograded", "feedback", "gradebook.db", ".hypothesis"
        ),
    )
    m = measure([*NBGRADER, "generate_assignment", ASSIGNMENT, "--force"], cwd=course, env=_nbgrader_env())
    if m.returncode != 0:
        raise SystemExit(f"nbgrader generate_assignment failed: {m.stderr[-3000:]}")
    return course


def _nbgrader_env() -> dict:
    # nbgrader runs `alembic` and the kernel from this environment's bin/ (see docs/instructors.md).
    return {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}


def run_nbgrader(paths: list[Path], template: Path, work: Path) -> tuple[Measured, Measured, Path]:
    """autograde, then generate_feedback, in a fresh copy of the prepared course."""
    course = work / "course"
    shutil.copytree(template, course)
    (course / "submitted").mkdir(exist_ok=True)
    for p in paths:
        folder = course / "submitted" / p.stem / ASSIGNMENT
        folder.mkdir(parents=True)
        shutil.copy(p, folder / f"{ASSIGNMENT}.ipynb")
    grade = measure([*NBGRADER, "autograde", ASSIGNMENT], cwd=course, env=_nbgrader_env())
    feedback = measure([*NBGRADER, "generate_feedback", ASSIGNMENT], cwd=course, env=_nbgrader_env())
    return grade, feedback, course


def nbgrader_scores(course: Path) -> dict[str, float]:
    from nbgrader.api import Gradebook

    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in gb.students:
            try:
                scores[student.id] = round(gb.find_submission(ASSIGNMENT, student.id).score, 6)
            except Exception:
                pass
    return scores
