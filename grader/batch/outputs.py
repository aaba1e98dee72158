"""Everything a batch writes: grades.csv, results/, feedback/, summary.html, Gradescope files, gradebook."""
from __future__ import annotations

import base64
import warnings
import csv
import io
import json
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


def _histogram_png(totals: list[float], max_score: float) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 2.6), dpi=100)
    ax.hist(totals, bins=min(20, max(5, int(max_score))), range=(0, max_score), color="#3a7bd5", edgecolor="white")
    ax.set_xlabel("total score")
    ax.set_ylabel("students")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


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
    img = _histogram_png(totals, assignment.max_score) if n else ""
    html = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Summary: {escape(assignment.id)}</title>'
            f"<style>{CSS}</style></head><body><h1>{escape(assignment.id)}: {n} submissions</h1>"
            f'<div class="total">mean {mean:.2f} of {assignment.max_score:g}; '
            + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())) + "</div>"
            + (f'<section><h2>Score distribution</h2><img alt="histogram of total scores" src="data:image/png;base64,{img}"></section>' if img else "")
            + f"<section><h2>Item analysis ({len(graded)} graded notebooks)</h2><table><colgroup><col style='width:14%'>"
              "<col style='width:26%'><col style='width:7%'><col style='width:9%'><col></colgroup>"
              "<tr><th>exercise</th><th>check</th><th>passed</th><th></th>"
              "<th>most common failure messages</th></tr>" + "".join(rows) + "</table></section>"
            + (f'<section><h2>Files not graded</h2><ul class="note">{skipped_html}</ul></section>' if skipped else "")
            + "</body></html>\n")
    write_atomic(outdir / "summary.html", html)


def write_gradebook(db_url: str, assignment: Assignment, results: dict[str, NotebookResult]) -> None:
    """Store every score in nbgrader's gradebook, so `nbgrader export` and formgrader see them."""
    import os
    import sys

    from nbgrader.api import Gradebook

    # nbgrader runs the `alembic` command from PATH; make sure this environment's own is found first.
    bindir = os.path.dirname(sys.executable)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    notebook = Path(assignment.notebook).stem
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy usage warns on every new submission
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
