"""``seqgrade grade``: grade one notebook, here or in a running grading server, and show the result."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from grader.jail.limits import Limits

from ..errors import OutputNotWritable, UsageError
from .arguments import check_assignment, limits_of, say_what_is_not_hidden
from .terminal import EXIT_OK, make_console

if TYPE_CHECKING:
    from rich.console import Console


def cmd_grade(args, console: Console | None) -> int:
    # Everything a user can get wrong is checked before the sandbox starts and torch is imported.
    limits = limits_of(args)
    check_assignment(args.assignment)
    path = Path(args.notebook)
    if path.is_dir():
        raise UsageError(
            f"{path} is a folder; `seqgrade grade` grades one notebook. "
            f"To grade a folder of submissions: seqgrade batch {path} --assignment ID --out OUTDIR"
        )
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    if args.feedback:
        try:
            Path(args.feedback).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputNotWritable(args.feedback, exc.strerror or str(exc)) from None
    result = None
    if args.backend == "sandbox" and not args.no_server:
        from .. import server

        remote = server.grade_remotely(path, args.assignment, limits)
        if remote.note:
            print(f"seqgrade: {remote.note}", file=sys.stderr)
        if remote.result is not None:
            from ..results import NotebookResult

            result = NotebookResult.from_dict(remote.result)
    if result is None:
        result = _grade_here(args, limits, path)
    say_what_is_not_hidden(limits)  # once graded: a sandbox that refused already said why, in one line
    return _show(args, console, result)


def _grade_here(args, limits: Limits, path: Path):
    launched = None
    if args.backend == "sandbox":
        from grader.sandbox.launch import launch_zygote

        launched = launch_zygote()  # starts importing torch over there while we import it here
    try:
        from ..collector import imports_uncollected

        with imports_uncollected():
            import torch

            from ..grading import Grader  # and torch, numpy, the checks
        torch.set_num_threads(1)  # as in a batch worker and the server: one thread, which its jail takes turns with
        with Grader(limits, backend=args.backend, launched=launched) as grader:
            return grader.grade(path, args.assignment)
    finally:
        if launched is not None and launched[0].poll() is None:  # never handed to a Grader (which reaps it)
            launched[0].kill()
            launched[0].wait()


def _show(args, console: Console | None, result) -> int:
    from ..fsutil import write_atomic

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

        console = console or make_console()
        print_summary(result, console)
        if args.feedback:
            console.print(f"feedback: {args.feedback}")
    return EXIT_OK
