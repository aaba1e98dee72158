"""``make demo``: for every assignment, release it, write sample submissions, batch-grade them, show the results.

Everything comes from files in this repository; no network is needed. Each assignment gets its own
folder ``OUT/<assignment>/`` with ``release/``, ``solution/``, ``submissions/`` and ``graded/``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from rich.console import Console

from grader.assignments.registry import ASSIGNMENTS
from grader.batch.progress import batch_progress
from grader.batch.run import BatchConfig, run_batch
from grader.batch.summary import print_batch_summary

from .release import release
from .samples import make_samples


def demo_assignment(assignment: str, out: Path, console: Console, *, count: int = 8, workers: int = 0) -> Path:
    """Release ``assignment`` into ``out``, write ``count`` samples, grade them; return the graded folder."""
    notebook = ASSIGNMENTS[assignment].notebook
    student = release(assignment, out / "release")
    solution = release(assignment, out / "solution", solutions=True)
    console.print(
        f"[bold]{assignment}[/bold]: released the student version to {student} and the solution version to {solution}"
    )
    submissions = out / "submissions"
    paths = make_samples(solution / notebook, submissions, count=count)
    (submissions / "notes.txt").write_text("a stray file that is not a notebook\n")
    console.print(f"wrote {len(paths)} sample submissions (correct, partly wrong, hostile, invalid) to {submissions}")
    config = BatchConfig(
        submissions=str(submissions), assignment=assignment, outdir=str(out / "graded"), workers=workers
    )
    with batch_progress(console, len(paths)) as progress:
        report = run_batch(config, progress=progress)
    print_batch_summary(console, report, Path(config.outdir))
    return Path(config.outdir)


def run_demo(out: Path, console: Console, *, count: int = 8, workers: int = 0) -> dict[str, Path]:
    """The demo of every assignment (each has sample cells: tests/test_declarations.py); {assignment: its graded
    folder}."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    return {a: demo_assignment(a, out / a, console, count=count, workers=workers) for a in ASSIGNMENTS}
