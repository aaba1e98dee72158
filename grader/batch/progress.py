"""Progress for a batch: a live bar on a terminal (done/total, rate, ETA, failures), log lines otherwise.

A line's score is written as the final table writes it (``totals.score_text``); it is the student's
total when the batch hands over the final result (``totals.final_result``)."""

from __future__ import annotations

import contextlib
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from .totals import score_text


@contextlib.contextmanager
def batch_progress(console: Console, total: int):
    problems = 0
    start = time.monotonic()
    if console.is_terminal:
        bar = Progress(
            TextColumn("grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("[red]{task.fields[problems]}"),
            console=console,
            transient=False,
        )
        task = bar.add_task("grading", total=total, rate="", problems="")
        with bar:

            def update(student, result, done, _total):
                nonlocal problems
                problems += result is None or result.status != "graded"
                rate = done / max(time.monotonic() - start, 1e-9)
                bar.update(
                    task, completed=done, rate=f"{rate:.2f}/s", problems=f"{problems} not graded" if problems else ""
                )
                if result is not None and result.chosen:
                    bar.console.print(f"{student}: {result.chosen}", markup=False, highlight=False)

            yield update
    else:

        def update(student, result, done, _total):
            nonlocal problems
            status = result.status if result is not None else "failed"
            problems += status != "graded"
            score = score_text(result) if result is not None else "-"
            chosen = f" ({result.chosen})" if result is not None and result.chosen else ""
            console.print(f"[{done}/{total}] {student}: {score} {status}{chosen}", markup=False, highlight=False)

        yield update
