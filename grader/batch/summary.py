"""The final summary table of a batch, printed on the terminal."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from grader.report.terminal import clip

from .totals import score_text


def print_batch_summary(console: Console, report, outdir: Path) -> None:
    table = Table(
        title=f"{report.total} submissions ({report.layout} layout) in {report.seconds:.1f} s: "
        f"{report.graded} graded now, {report.reused} reused, {report.failed} failed"
    )
    table.add_column("student")
    table.add_column("score", justify="right")
    table.add_column("status")
    for student, r in sorted(report.results.items()):
        table.add_row(Text(student), score_text(r), Text(r.status + (f": {clip(r.reason, 90)}" if r.reason else "")))
    console.print(table)
    for path, why in report.skipped:
        console.print(f"skipped {path}: {why}", markup=False, highlight=False)
    for note in getattr(report, "notes", ()):
        console.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    for name in (
        "grades.csv",
        "summary.html",
        "results/",
        "feedback/",
        "similarity/index.html",
        "gradebook.db",
        "canvas-grades.csv",
        "gradescope-grades.csv",
    ):
        if (outdir / name).exists() or name.endswith("/"):
            console.print(f"  {outdir / name}", markup=False, highlight=False)
