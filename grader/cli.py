"""The ``seqgrade`` command line. ``main(argv) -> int`` is the only place that prints errors and picks
exit codes: 0 when a result was produced (whatever the score), 2 for usage errors, 3 when the sandbox
cannot run on this machine."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from grader.jail.limits import ISOLATION_LEVELS, Limits

from .errors import OutputNotWritable, SandboxError, SandboxUnavailable, SeqgradeError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK, EXIT_USAGE, EXIT_SANDBOX = 0, 2, 3


class _ReaderMayGo:
    """Standard output that lets a command finish when its reader has gone (``| head``, a closed terminal):
    what a staff command stores and rewrites matters more than what it says, so what it says after that is
    dropped instead of stopping it between the two."""

    def __init__(self, stream):
        self._stream, self._gone = stream, False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._gone = True
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone = True

    def __getattr__(self, name):  # isatty, encoding, fileno...: the stream's own
        return getattr(self._stream, name)


def _console() -> "Console":
    from rich.console import Console

    return Console(file=_ReaderMayGo(sys.stdout))


# Each limit option as the user types it; checked here, before anything slow is imported.
_POSITIVE_OPTIONS = (("timeout", "--timeout"), ("call_cpu", "--call-cpu"), ("call_timeout", "--call-timeout"),
                     ("memory_mb", "--memory-mb"))


def _limits(args) -> Limits:
    for attr, option in _POSITIVE_OPTIONS:
        value = getattr(args, attr)
        if value is not None and not value > 0:
            raise UsageError(f"{option} must be positive; got {value:g}")
    try:
        limits = Limits(isolation=args.isolation, memory_mb=args.memory_mb, call_timeout_s=args.call_timeout,
                        call_cpu_s=args.call_cpu)
        return limits.with_timeout(args.timeout)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _say_what_is_not_hidden(limits: Limits) -> None:
    """One plain line when the isolation level asked for cannot hide this machine's files from student code."""
    from grader.sandbox.jails import what_it_cannot_hide

    said = what_it_cannot_hide(limits.isolation)
    if said:
        print(f"seqgrade: {said}", file=sys.stderr)


def _check_assignment(name: str | None) -> None:
    """An unknown assignment id is a usage error, found without importing the checks (and torch)."""
    from .assignments import assignment_ids

    if name is not None and name not in assignment_ids():
        raise UsageError(f"unknown assignment {name!r}; the course has {', '.join(assignment_ids())}")


def _add_limit_options(p: argparse.ArgumentParser) -> None:
    d = Limits()
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help=f"wall-clock budget of one notebook (default {d.submission_timeout_s:g})")
    p.add_argument("--call-cpu", type=float, default=d.call_cpu_s, metavar="SECONDS",
                   help=f"user CPU time one call into student code may use, measured outside the sandbox "
                        f"(default {d.call_cpu_s:g}; a function whose honest calls are heavier keeps its own "
                        f"larger budget)")
    p.add_argument("--call-timeout", type=float, default=d.call_timeout_s, metavar="SECONDS",
                   help=f"wall-clock backstop of one call (default {d.call_timeout_s:g}); a call that waits "
                        f"without computing is stopped after {d.call_idle_s:g} s anyway")
    p.add_argument("--memory-mb", type=int, default=d.memory_mb, metavar="MB",
                   help=f"address-space limit per student process, in MiB (default {d.memory_mb})")
    p.add_argument("--isolation", choices=ISOLATION_LEVELS, default="namespaces",
                   help="'rlimits' drops the filesystem and network jail: only for machines without namespaces")


def cmd_grade(args, console: Console | None) -> int:
    # Everything a user can get wrong is checked before the sandbox starts and torch is imported.
    limits = _limits(args)
    _check_assignment(args.assignment)
    path = Path(args.notebook)
    if path.is_dir():
        raise UsageError(f"{path} is a folder; `seqgrade grade` grades one notebook. "
                         f"To grade a folder of submissions: seqgrade batch {path} --assignment ID --out OUTDIR")
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    if args.feedback:
        try:
            Path(args.feedback).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputNotWritable(args.feedback, exc.strerror or str(exc)) from None
    result = None
    if args.backend == "sandbox" and not args.no_server:
        from . import server

        remote = server.grade_remotely(path, args.assignment, limits)
        if remote.note:
            print(f"seqgrade: {remote.note}", file=sys.stderr)
        if remote.result is not None:
            from .results import NotebookResult

            result = NotebookResult.from_dict(remote.result)
    if result is None:
        result = _grade_here(args, limits, path)
    _say_what_is_not_hidden(limits)  # once graded: a sandbox that refused already said why, in one line
    return _show(args, console, result)


def _grade_here(args, limits: Limits, path: Path):
    launched = None
    if args.backend == "sandbox":
        from grader.sandbox.launch import launch_zygote
        launched = launch_zygote()  # starts importing torch over there while we import it here
    try:
        from .collector import imports_uncollected

        with imports_uncollected():
            import torch

            from .grading import Grader  # and torch, numpy, the checks
        torch.set_num_threads(1)  # as in a batch worker and the server: one thread, which its jail takes turns with
        with Grader(limits, backend=args.backend, launched=launched) as grader:
            return grader.grade(path, args.assignment)
    finally:
        if launched is not None and launched[0].poll() is None:  # never handed to a Grader (which reaps it)
            launched[0].kill()
            launched[0].wait()


def _show(args, console: Console | None, result) -> int:
    from .fsutil import write_atomic

    if args.feedback:
        from grader.report.html import render

        try:
            write_atomic(args.feedback, render(result))
        except OSError as exc:
            raise OutputNotWritable(args.feedback, exc.strerror or str(exc)) from None
    if args.json:
        sys.stdout.write(result.to_json())
    else:
        from grader.report.terminal import print_summary

        console = console or _console()
        print_summary(result, console)
        if args.feedback:
            console.print(f"feedback: {args.feedback}")
    return EXIT_OK


def cmd_serve(args, console: Console) -> int:
    from . import server

    if not args.idle_exit > 0:
        raise UsageError(f"--idle-exit must be positive; got {args.idle_exit:g}")
    def say(text: str) -> None:  # paths may hold brackets: no markup, and one line however long
        console.print(text, markup=False, highlight=False, soft_wrap=True)
    if args.stop:
        say("grading server stopped" if server.stop() else "no grading server was running")
        return EXIT_OK
    if args.status:
        found = server.status()
        if found is None:
            say("no grading server is running")
        else:
            since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(found["since"]))
            current = "" if found["current"] else "; it runs other code than this seqgrade: restart it"
            say(f"grading server pid {found['pid']} at {found['address']}, since {since}, "
                f"{found['graded']} notebook(s) graded{current}")
        return EXIT_OK
    if args.detach:
        found = server.start_detached(args.idle_exit, args.isolation)
        say(f"grading server ready: pid {found['pid']} at {found['address']}; `seqgrade grade` uses it. "
            f"It stops after {args.idle_exit:g} s without a request, or with `seqgrade serve --stop`.")
        return EXIT_OK

    def ready(where) -> None:
        print(f"seqgrade: grading server ready at {where}; `seqgrade grade` uses it. Ctrl-C stops it.",
              file=sys.stderr, flush=True)
    try:
        from grader.server import serving

        graded = serving.serve(args.idle_exit, on_ready=ready, isolation=args.isolation)
    except KeyboardInterrupt:
        return EXIT_OK
    print(f"seqgrade: grading server stopped after grading {graded} notebook(s)", file=sys.stderr)
    return EXIT_OK


def cmd_list(args, console: Console) -> int:
    from rich.table import Table
    from rich.text import Text

    from grader.assignments.registry import ASSIGNMENTS

    for a in ASSIGNMENTS.values():
        bonus = f" + {a.bonus_points:g} bonus" if a.bonus_points else ""
        table = Table(title=f"{a.id} ({a.notebook}): {a.max_score:g} points{bonus}")
        table.add_column("exercise")
        table.add_column("points", justify="right")
        table.add_column("checks (property)")
        for e in a.exercises:
            checks = "\n".join(f"{c.points:g}  {c.property}" for c in e.checks) or "graded by course staff"
            table.add_row(Text(e.id + (" (bonus)" if e.bonus else "")), f"{e.points:g}", Text(checks))  # Text: "E[x_t]" is not rich markup
        console.print(table)
    return EXIT_OK


def cmd_batch(args, console: Console) -> int:
    from grader.batch.inputs import discover
    from grader.batch.record import check_outdir_assignment, check_storable_db_url

    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1; got {args.workers}")
    limits = _limits(args)
    _check_assignment(args.assignment)
    check_storable_db_url(args.db)
    check_outdir_assignment(args.out, args.assignment)
    found = discover(args.submissions, args.assignment, file_times=args.file_times)  # fail fast, before anything slow is imported
    zygote = None
    if found.jobs and not args.scheduler and not (Path(args.out) / "results").is_dir():  # every notebook will be graded:
        from grader.batch.pool import start_early  # the workers' imports start now, beside this process's own

        zygote = start_early(args.assignment)
    total, layout = len(found.jobs), found.layout
    # Said before the workers import torch and the checks (seconds), so the TA sees at once that it started.
    console.print(f"seqgrade batch: {total} notebooks in {args.submissions} ({layout}); loading the grader...",
                  markup=False, highlight=False)
    try:  # the assignment's outline only: this process writes the outputs, its workers import the checks (and torch)
        from grader.assignments.registry import get_outline
        from grader.batch.progress import batch_progress
        from grader.batch.run import BatchConfig, run_batch
        from grader.batch.summary import print_batch_summary

        get_outline(args.assignment)
        _say_what_is_not_hidden(limits)
        config = BatchConfig(submissions=args.submissions, assignment=args.assignment, outdir=args.out,
                             workers=args.workers or 0, scheduler=args.scheduler, db_url=args.db,
                             gradescope=args.gradescope, limits=limits, lms=args.lms or "", late_policy=args.late_policy,
                             extensions=args.extensions, file_times=args.file_times)

        def phase(text: str) -> None:
            console.print(text, markup=False, highlight=False)

        with batch_progress(console, total) as progress:
            report = run_batch(config, progress=progress, phase=phase, found=found, zygote=zygote)  # the archive, unpacked once
    except BaseException:  # run_batch, once it runs, removes the unpacked archive and ends the zygote itself; doing
        found.cleanup()  # either again does nothing, so this covers every way out before run_batch too
        if zygote is not None:
            zygote.close()
        raise
    print_batch_summary(console, report, Path(args.out))
    return EXIT_OK


def cmd_demo(args, console: Console) -> int:
    from grader.course.demo import run_demo

    run_demo(Path(args.out), console)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    from .version import __version__

    parser = argparse.ArgumentParser(prog="seqgrade", description="Sandboxed, property-based grading of sequence-model notebooks.")
    parser.add_argument("--version", action="version", version=f"seqgrade {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("grade", help="grade one notebook")
    p.add_argument("notebook", metavar="NOTEBOOK.ipynb", help="the submitted notebook (a folder of them: use `seqgrade batch`)")
    p.add_argument("--assignment", help="assignment id (default: from the notebook's metadata or file name)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document")
    p.add_argument("--feedback", metavar="OUT.html", help="write a self-contained HTML feedback page")
    p.add_argument("--backend", choices=("sandbox", "inprocess"), default="sandbox", help=argparse.SUPPRESS)
    p.add_argument("--no-server", action="store_true",
                   help="grade in this process even when a grading server (`seqgrade serve`) is running")
    _add_limit_options(p)
    p.set_defaults(func=cmd_grade)
    p = sub.add_parser("serve", help="keep a warm grader running that `seqgrade grade` hands notebooks to "
                                     "(then each grade takes well under a second instead of about two)")
    p.add_argument("--detach", action="store_true", help="start it in the background and return once it is ready")
    p.add_argument("--idle-exit", type=float, default=3600.0, metavar="SECONDS",
                   help="stop after this long without a request (default 3600)")
    p.add_argument("--stop", action="store_true", help="stop the running server")
    p.add_argument("--status", action="store_true", help="say whether a server is running, and since when")
    p.add_argument("--isolation", choices=ISOLATION_LEVELS, default="namespaces",
                   help="the sandbox the server starts with ('rlimits' only for machines without namespaces; "
                        "`seqgrade grade --isolation` still chooses per notebook)")
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("list", help="list assignments, exercises, checks and points")
    p.set_defaults(func=cmd_list)
    from grader.course.cli import add_course_parsers
    add_course_parsers(sub)
    p = sub.add_parser("batch", help="grade a folder, nbgrader tree or LMS export of notebooks")
    p.add_argument("submissions", metavar="SUBMISSIONS", help="a folder, an nbgrader submitted/ tree, or a Canvas/Gradescope .zip")
    p.add_argument("--assignment", required=True, metavar="ID", help="assignment id (see `seqgrade list`)")
    p.add_argument("--out", required=True, metavar="OUTDIR",
                   help="where grades.csv, summary.html, results/, feedback/ and the gradebook go (a rerun reuses it)")
    p.add_argument("--workers", type=int, default=None, metavar="N", help="parallel workers (default: one per core)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on an existing Dask cluster, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--db", metavar="URL", help="gradebook database URL, without a password: it is kept in OUTDIR/batch.json (default: sqlite file OUTDIR/gradebook.db)")
    p.add_argument("--gradescope", action="store_true", help="also write OUTDIR/gradescope/<student>/results.json")
    p.add_argument("--lms", choices=("canvas", "gradescope"), help="also write OUTDIR/<lms>-grades.csv, which that LMS's gradebook imports")
    p.add_argument("--late-policy", metavar="POLICY.json", help="the late policy (default: the course config's, if any)")
    p.add_argument("--extensions", metavar="CSV", help="extensions: student, due, reason (instead of the policy's own file)")
    p.add_argument("--file-times", action="store_true", help="a folder's file times are the submission times")
    _add_limit_options(p)
    p.set_defaults(func=cmd_batch)
    p = sub.add_parser("demo", help="release, make sample submissions, grade them all, and show the reports")
    p.add_argument("--out", default="demo-out", metavar="DIR", help="where the demo writes everything (default demo-out)")
    p.set_defaults(func=cmd_demo)
    from grader.batch.staff_cli import add_staff_parsers
    add_staff_parsers(sub)
    from grader.batch.similarity_command import add_parser as add_similarity
    add_similarity(sub)
    from grader.gradescope.cli import add_gradescope_parsers
    add_gradescope_parsers(sub)
    from grader.audit.cli import add_audit_parser
    add_audit_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    def error(text: str) -> None:  # one plain line, never wrapped
        print(text.replace("\n", " "), file=sys.stderr)
    from .collector import skip_unused_imports

    skip_unused_imports()  # before anything imports nbformat or nbgrader (see grader.collector)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage line
        return EXIT_USAGE if exc.code else EXIT_OK
    # `grade` makes its console only to print a summary: rich is not imported before its sandbox starts,
    # nor at all for --json.
    console = None if args.func is cmd_grade else _console()
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


def run() -> None:
    """The ``seqgrade`` program: ``main`` on the command line's arguments, then a quick exit.

    Once the outputs are written and flushed and the exit handlers have run (the sandbox is closed, temporary
    folders removed), the process ends without tearing down torch's modules one by one, which costs
    about 0.7 s of CPU and does nothing a finished command needs."""
    import atexit

    from .collector import end_process

    code = main()
    atexit._run_exitfuncs()
    end_process(code)


if __name__ == "__main__":
    run()
