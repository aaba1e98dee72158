"""``make demo``: release the assignment, write sample submissions, batch-grade them, show the results.

Everything comes from files in this repository; no network is needed.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from rich.console import Console

from .batch.progress import batch_progress
from .batch.run import BatchConfig, run_batch
from .release import release
from .samples import make_samples


def run_demo(out: Path, console: Console, *, count: int = 8, workers: int = 0) -> Path:
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    student = release("sequence_models", out / "release")
    solution = release("sequence_models", out / "solution", solutions=True)
    console.print(f"released the student version to {student} and the solution version to {solution}")
    submissions = out / "submissions"
    paths = make_samples(solution / "sequence_models.ipynb", submissions, count=count)
    (submissions / "notes.txt").write_text("a stray file that is not a notebook\n")
    console.print(f"wrote {len(paths)} sample submissions (correct, partly wrong, hostile, invalid) to {submissions}")
    config = BatchConfig(submissions=str(submissions), assignment="sequence_models", outdir=str(out / "graded"), workers=workers)
    with batch_progress(console, len(paths)) as progress:
        report = run_batch(config, progress=progress)
    from .batch.summary import print_batch_summary

    print_batch_summary(console, report, Path(config.outdir))
    return Path(config.outdir)
