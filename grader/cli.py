"""The ``seqgrade`` command line. ``main(argv) -> int`` is the only place that prints errors and picks
exit codes: 0 when a result was produced (whatever the score), 2 for usage errors, 3 when the sandbox
cannot run on this machine."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from .errors import OutputNotWritable, SandboxError, SandboxUnavailable, SeqgradeError, UsageError
from .sandbox.limits import ISOLATION_LEVELS, Limits

EXIT_OK, EXIT_USAGE, EXIT_SANDBOX = 0, 2, 3


def _limits(args) -> Limits:
    try:
        limits = Limits(isolation=args.isolation, memory_mb=args.memory_mb, call_timeout_s=args.call_timeout,
                        call_cpu_s=args.call_cpu)
        return limits.with_timeout(args.timeout)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _add_limit_options(p: argparse.ArgumentParser) -> None:
    d = Limits()
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help=f"wall-clock budget of one notebook (default {d.submission_timeout_s:g})")
    p.add_argument("--call-cpu", type=float, default=d.call_cpu_s, metavar="SECONDS",
                   help=f"user CPU time one call into student code may use, measured outside the sandbox "
                        f"(default {d.call_cpu_s:g})")
    p.add_argument("--call-timeout", type=float, default=d.call_timeout_s, metavar="SECONDS",
                   help=f"wall-clock backstop of one call, for code that sleeps (default {d.call_timeout_s:g})")
    p.add_argument("--memory-mb", type=int, default=d.memory_mb, help=f"address-space limit per student process (default {d.memory_mb})")
    p.add_argument("--isolation", choices=ISOLATION_LEVELS, default="namespaces",
                   help="'rlimits' drops the filesystem and network jail: only for machines without namespaces")


def cmd_grade(args, console: Console) -> int:
    launched = None
    if args.backend == "sandbox" and Path(args.notebook).is_file():
        from .sandbox.launch import launch_zygote
        launched = launch_zygote()  # starts importing torch over there while we import it here
    try:
        return _grade(args, console, launched)
    finally:
        if launched is not None and launched[0].poll() is None:  # never handed to a Grader (which reaps it)
            launched[0].kill()
            launched[0].wait()


def _grade(args, console: Console, launched) -> int:
    from .grading import Grader
    from .report.html import render
    from .report.terminal import print_summary
    from .fsutil import write_atomic

    limits = _limits(args)
    path = Path(args.notebook)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    if args.assignment:
        from .registry import get_assignment
        get_assignment(args.assignment)
    if args.feedback:
        try:
            Path(args.feedback).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputNotWritable(args.feedback, exc.strerror or str(exc)) from None
    with Grader(limits, backend=args.backend, launched=launched) as grader:
        result = grader.grade(path, args.assignment)
    if args.feedback:
        try:
            write_atomic(args.feedback, render(result))
        except OSError as exc:
            raise OutputNotWritable(args.feedback, exc.strerror or str(exc)) from None
    if args.json:
        sys.stdout.write(result.to_json())
    else:
        print_summary(result, console)
        if args.feedback:
            console.print(f"feedback: {args.feedback}")
    return EXIT_OK


def cmd_list(args, console: Console) -> int:
    from rich.table import Table
    from rich.text import Text

    from .registry import ASSIGNMENTS

    for a in ASSIGNMENTS.values():
        table = Table(title=f"{a.id} ({a.notebook}): {a.max_score:g} points")
        table.add_column("exercise")
        table.add_column("points", justify="right")
        table.add_column("checks (property)")
        for e in a.exercises:
            checks = "\n".join(f"{c.points:g}  {c.property}" for c in e.checks) or "graded by course staff"
            table.add_row(Text(e.id), f"{e.points:g}", Text(checks))  # Text: "E[x_t]" is not rich markup
        console.print(table)
    return EXIT_OK


def cmd_release(args, console: Console) -> int:
    from .release import release

    folder = release(args.assignment, args.out, solutions=args.solutions)
    console.print(f"wrote the {'solution' if args.solutions else 'student'} version to {folder}")
    return EXIT_OK


def cmd_batch(args, console: Console) -> int:
    from .batch.inputs import discover

    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1; got {args.workers}")
    limits = _limits(args)
    found = discover(args.submissions, args.assignment)  # fail fast, before anything slow is imported
    total, layout = len(found.jobs), found.layout
    found.cleanup()
    # Said before torch and the checks are imported (seconds), so the TA sees at once that it started.
    console.print(f"seqgrade batch: {total} notebooks in {args.submissions} ({layout}); loading the grader...",
                  markup=False, highlight=False)
    from .batch.progress import batch_progress
    from .batch.run import BatchConfig, run_batch
    from .batch.summary import print_batch_summary
    from .registry import get_assignment

    get_assignment(args.assignment)
    config = BatchConfig(submissions=args.submissions, assignment=args.assignment, outdir=args.out,
                         workers=args.workers or 0, scheduler=args.scheduler, db_url=args.db,
                         gradescope=args.gradescope, limits=limits)

    def phase(text: str) -> None:
        console.print(text, markup=False, highlight=False)

    with batch_progress(console, total) as progress:
        report = run_batch(config, progress=progress, phase=phase)
    print_batch_summary(console, report, Path(args.out))
    return EXIT_OK


def cmd_demo(args, console: Console) -> int:
    from .demo import run_demo

    run_demo(Path(args.out), console)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seqgrade", description="Sandboxed, property-based grading of sequence-model notebooks.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("grade", help="grade one notebook")
    p.add_argument("notebook")
    p.add_argument("--assignment", help="assignment id (default: from the notebook's metadata or file name)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document")
    p.add_argument("--feedback", metavar="OUT.html", help="write a self-contained HTML feedback page")
    p.add_argument("--backend", choices=("sandbox", "inprocess"), default="sandbox", help=argparse.SUPPRESS)
    _add_limit_options(p)
    p.set_defaults(func=cmd_grade)
    p = sub.add_parser("list", help="list assignments, exercises, checks and points")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("release", help="write the student (or solution) version of an assignment")
    p.add_argument("assignment")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--solutions", action="store_true", help="keep the solutions (hidden tests are still removed)")
    p.set_defaults(func=cmd_release)
    p = sub.add_parser("batch", help="grade a folder, nbgrader tree or LMS export of notebooks")
    p.add_argument("submissions", metavar="SUBMISSIONS", help="a folder, an nbgrader submitted/ tree, or a Canvas/Gradescope .zip")
    p.add_argument("--assignment", required=True)
    p.add_argument("--out", required=True, metavar="OUTDIR")
    p.add_argument("--workers", type=int, default=None, help="parallel workers (default: one per core)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on an existing Dask cluster, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--db", metavar="URL", help="gradebook database URL (default: sqlite file OUTDIR/gradebook.db)")
    p.add_argument("--gradescope", action="store_true", help="also write OUTDIR/gradescope/<student>/results.json")
    _add_limit_options(p)
    p.set_defaults(func=cmd_batch)
    p = sub.add_parser("demo", help="release, make sample submissions, grade them all, and show the reports")
    p.add_argument("--out", default="demo-out", metavar="DIR")
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    console = Console(stderr=False)

    def error(text: str) -> None:  # one plain line, never wrapped
        print(text.replace("\n", " "), file=sys.stderr)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage line
        return EXIT_USAGE if exc.code else EXIT_OK
    try:
        return args.func(args, console)
    except UsageError as exc:
        error(f"seqgrade: error: {exc}")
        return EXIT_USAGE
    except (SandboxUnavailable, SandboxError) as exc:
        error(f"seqgrade: sandbox: {exc}")
        return EXIT_SANDBOX
    except SeqgradeError as exc:
        error(f"seqgrade: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
