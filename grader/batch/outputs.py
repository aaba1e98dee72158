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
from collections import Counter
from html import escape
from pathlib import Path

from ..fsutil import write_atomic
from ..registry import Assignment
from ..report.html import CSS, render
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


def histogram_svg(totals: list[float], max_score: float, width: int = 480, height: int = 160) -> str:
    """The distribution of total scores as an inline SVG bar chart (no plotting library, no script)."""
    bins = min(20, max(5, int(max_score)))
    counts = [0] * bins
    for t in totals:
        counts[min(bins - 1, max(0, int(t / max_score * bins))) if max_score > 0 else 0] += 1
    top, left, bottom = max(counts) or 1, 36, 28
    bar = (width - left - 8) / bins
    plot = height - bottom - 8
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="histogram of total scores">']
    for i, c in enumerate(counts):
        h = plot * c / top
        parts.append(f'<rect x="{left + i * bar + 1:.1f}" y="{8 + plot - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
                     f'fill="#3a7bd5"><title>{max_score * i / bins:g}-{max_score * (i + 1) / bins:g}: {c}</title></rect>')
    parts.append(f'<line x1="{left}" y1="{8 + plot}" x2="{width - 8}" y2="{8 + plot}" stroke="#888"/>')
    for value, x in ((0, left), (max_score, width - 8)):
        parts.append(f'<text x="{x}" y="{height - 12}" font-size="11" text-anchor="middle">{value:g}</text>')
    parts.append(f'<text x="{(left + width) / 2:.0f}" y="{height - 2}" font-size="11" text-anchor="middle">total score</text>')
    parts.append(f'<text x="4" y="16" font-size="11">{top}</text><text x="4" y="{8 + plot}" font-size="11">0</text>')
    return "".join(parts) + "</svg>"


def write_summary(outdir: Path, assignment: Assignment, results: dict[str, NotebookResult], skipped: list) -> None:
    """Instructor summary: score histogram and item analysis (pass rate and commonest failures per check)."""
    n = len(results)
    totals = [r.score for r in results.values()]
    graded = [r for r in results.values() if r.status == "graded"]  # unreadable notebooks say nothing about items
    rows = []
    for ex in assignment.exercises:
        for chk in ex.checks or ():
            outcomes = [c for r in graded for e in r.exercises if e.id == ex.id for c in e.checks if c.name == chk.name]
            passed = sum(c.status == "passed" for c in outcomes)
            messages = Counter(c.message.splitlines()[0][:160] for c in outcomes if c.status not in ("passed", "manual") and c.message)
            common = "".join(f"<li>{count}× {escape(msg)}</li>" for msg, count in messages.most_common(3))
            rate = passed / len(outcomes) if outcomes else 0.0
            rows.append(f"<tr><td>{escape(ex.id)}</td><td>{escape(chk.name)}</td><td>{passed}/{len(outcomes)}</td>"
                        f'<td><div style="background:#3a7bd5;height:.8rem;width:{rate * 8:.2f}rem"></div></td>'
                        f"<td><ul>{common}</ul></td></tr>")
    statuses = Counter(r.status for r in results.values())
    mean = sum(totals) / n if n else 0.0
    skipped_html = "".join(f"<li>{escape(p)}: {escape(why)}</li>" for p, why in skipped)
    img = histogram_svg(totals, assignment.max_score) if n else ""
    html = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Summary: {escape(assignment.id)}</title>'
            f"<style>{CSS}</style></head><body><h1>{escape(assignment.id)}: {n} submissions</h1>"
            f'<div class="total">mean {mean:.2f} of {assignment.max_score:g}; '
            + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())) + "</div>"
            + (f"<section><h2>Score distribution</h2>{img}</section>" if img else "")
            + f"<section><h2>Item analysis ({len(graded)} graded notebooks)</h2><table><colgroup><col style='width:14%'>"
              "<col style='width:26%'><col style='width:7%'><col style='width:9%'><col></colgroup>"
              "<tr><th>exercise</th><th>check</th><th>passed</th><th></th>"
              "<th>most common failure messages</th></tr>" + "".join(rows) + "</table></section>"
            + (f'<section><h2>Files not graded</h2><ul class="note">{skipped_html}</ul></section>' if skipped else "")
            + "</body></html>\n")
    write_atomic(outdir / "summary.html", html)


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
