"""Everything a batch writes: grades.csv, results/, feedback/, summary.html, Gradescope files, gradebook."""
from __future__ import annotations

import csv
import importlib
import importlib.util
import io
import json
import re
import threading
import warnings
from pathlib import Path

from ..fsutil import write_atomic
from ..registry import Assignment
from ..report.html import render
from ..report.summary import write_summary  # noqa: F401 (run.py writes the summary through here)
from ..results import NotebookResult


def fmt(x: float) -> str:
    return f"{x:g}"


def write_result(outdir: Path, student: str, result: NotebookResult, key: str) -> None:
    data = result.to_dict()
    data["cache_key"] = key
    write_atomic(outdir / "feedback" / f"{student}.html", render(result))
    write_atomic(outdir / "results" / f"{student}.json", json.dumps(data, indent=2, allow_nan=False) + "\n")


def read_result(outdir: Path, student: str) -> tuple[NotebookResult, str] | None:
    path = outdir / "results" / f"{student}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return NotebookResult.from_dict(data), data.get("cache_key", "")
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_grades_csv(outdir: Path, assignment: Assignment, results: dict[str, NotebookResult]) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    ids = [e.id for e in assignment.exercises]
    writer.writerow(["student_id", "total", "max_score", *ids, "status"])
    for student in sorted(results):
        r = results[student]
        scores = {e.id: fmt(e.score) for e in r.exercises}
        writer.writerow([student, fmt(r.score), fmt(r.max_score), *(scores.get(i, "0") for i in ids), r.status])
    write_atomic(outdir / "grades.csv", buf.getvalue())


def write_gradescope(outdir: Path, student: str, result: NotebookResult) -> None:
    tests = [{"name": f"{e.id}: {c.name}", "score": c.points, "max_score": c.max_points,
              "status": "passed" if c.status == "passed" else "failed", "output": c.message}
             for e in result.exercises for c in e.checks if c.status != "manual"]
    data = {"score": result.score, "output": result.reason or f"seqgrade {result.status}", "tests": tests}
    write_atomic(outdir / "gradescope" / student / "results.json", json.dumps(data, indent=2) + "\n")


def alembic_head() -> str:
    """The newest revision of nbgrader's gradebook schema, read from its migration files (nbgrader itself
    would run the ``alembic`` command in a subprocess to learn it, seconds per new gradebook)."""
    spec = importlib.util.find_spec("nbgrader")
    versions = Path(next(iter(spec.submodule_search_locations))) / "alembic" / "versions"
    revisions, parents = set(), set()
    for path in versions.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        revisions.update(re.findall(r"^revision\s*=\s*['\"](\w+)['\"]", text, re.MULTILINE))
        for line in re.findall(r"^down_revision\s*=\s*(.+)$", text, re.MULTILINE):
            parents.update(re.findall(r"['\"](\w+)['\"]", line))
    heads = sorted(revisions - parents)
    if len(heads) != 1:
        raise RuntimeError(f"nbgrader's gradebook schema has {len(heads)} heads: {heads}")
    return heads[0]


def _create_empty_gradebook(db_url: str) -> None:
    """A new SQLite gradebook with nbgrader's tables and schema version, made without the alembic command."""
    from nbgrader.api import Base
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(db_url, future=True)
    try:
        if inspect(engine).get_table_names():
            return
        Base.metadata.create_all(bind=engine)
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
            conn.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": alembic_head()})
    finally:
        engine.dispose()


def prefetch_gradebook() -> threading.Thread:
    """Import nbgrader's gradebook API in the background (about 2 s), while the batch grades."""
    thread = threading.Thread(target=importlib.import_module, args=("nbgrader.api",), daemon=True)
    thread.start()
    return thread


def write_gradebook(db_url: str, assignment: Assignment, results: dict[str, NotebookResult]) -> None:
    """Store every score in nbgrader's gradebook, so `nbgrader export` and formgrader see them."""
    import os
    import sys

    from nbgrader.api import Gradebook

    # nbgrader runs the `alembic` command from PATH for a database it has to create (not a SQLite one,
    # which is created here); make sure this environment's own is found first.
    bindir = os.path.dirname(sys.executable)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    notebook = Path(assignment.notebook).stem
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy usage warns on every new submission
        if db_url.startswith("sqlite:///"):
            _create_empty_gradebook(db_url)
        _fill_gradebook(Gradebook(db_url), notebook, assignment, results)


def _fill_gradebook(gradebook, notebook: str, assignment: Assignment, results: dict[str, NotebookResult]) -> None:
    with gradebook as gb:
        gb.update_or_create_assignment(assignment.id)
        gb.update_or_create_notebook(notebook, assignment.id)
        for ex in assignment.exercises:
            cell_id = ex.id if ex.kind == "manual" else f"test_{ex.id}"
            gb.update_or_create_grade_cell(cell_id, notebook, assignment.id, max_score=ex.points,
                                           cell_type="markdown" if ex.kind == "manual" else "code")
        for student in sorted(results):
            r = results[student]
            gb.update_or_create_student(student)
            gb.update_or_create_submission(assignment.id, student)
            for e in r.exercises:
                ex = assignment.exercise(e.id)
                cell_id = ex.id if ex.kind == "manual" else f"test_{ex.id}"
                grade = gb.find_grade(cell_id, notebook, assignment.id, student)
                if ex.kind == "manual":
                    grade.needs_manual_grade = True
                else:
                    grade.auto_score = e.score
                    grade.needs_manual_grade = False
        gb.db.commit()
