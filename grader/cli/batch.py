"""``seqgrade batch``: grade a folder, nbgrader tree or LMS export of notebooks, and summarise the batch."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from .arguments import check_assignment, limits_of, say_what_is_not_hidden
from .terminal import EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console


def cmd_batch(args, console: Console) -> int:
    from grader.batch.inputs import discover
    from grader.batch.record import check_outdir_assignment, check_storable_db_url

    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1; got {args.workers}")
    limits = limits_of(args)
    check_assignment(args.assignment)
    check_storable_db_url(args.db)
    check_outdir_assignment(args.out, args.assignment)
    found = discover(
        args.submissions, args.assignment, file_times=args.file_times
    )  # fail fast, before anything slow is imported
    zygote = None
    if (
        found.jobs and not args.scheduler and not (Path(args.out) / "results").is_dir()
    ):  # every notebook will be graded:
        from grader.batch.pool import start_early  # the workers' imports start now, beside this process's own

        zygote = start_early(args.assignment)
    total, layout = len(found.jobs), found.layout
    # Said before the workers import torch and the checks (seconds), so the TA sees at once that it started.
    console.print(
        f"seqgrade batch: {total} notebooks in {args.submissions} ({layout}); loading the grader...",
        markup=False,
        highlight=False,
    )
    try:  # the assignment's outline only: this process writes the outputs, its workers import the checks (and torch)
        from grader.assignments.registry import get_outline
        from grader.batch.progress import batch_progress
        from grader.batch.run import BatchConfig, run_batch
        from grader.batch.summary import print_batch_summary

        get_outline(args.assignment)
        say_what_is_not_hidden(limits)
        config = BatchConfig(
            submissions=args.submissions,
            assignment=args.assignment,
            outdir=args.out,
            workers=args.workers or 0,
            scheduler=args.scheduler,
            db_url=args.db,
            gradescope=args.gradescope,
            limits=limits,
            lms=args.lms or "",
            late_policy=args.late_policy,
            extensions=args.extensions,
            file_times=args.file_times,
        )

        def phase(text: str) -> None:
            console.print(text, markup=False, highlight=False)

        with batch_progress(console, total) as progress:
            report = run_batch(
                config, progress=progress, phase=phase, found=found, zygote=zygote
            )  # the archive, unpacked once
    except BaseException:  # run_batch, once it runs, removes the unpacked archive and ends the zygote itself; doing
        found.cleanup()  # either again does nothing, so this covers every way out before run_batch too
        if zygote is not None:
            zygote.close()
        raise
    print_batch_summary(console, report, Path(args.out))
    return EXIT_OK
