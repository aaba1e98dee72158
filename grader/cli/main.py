"""``main(argv) -> int``: parse the arguments, run the command, and turn the library's typed errors into one
line and an exit code; ``run``: the ``seqgrade`` program."""

from __future__ import annotations

import sys

from ..errors import SandboxError, SandboxUnavailable, SeqgradeError, UsageError
from .grade import cmd_grade
from .parser import build_parser
from .terminal import EXIT_OK, EXIT_SANDBOX, EXIT_USAGE, make_console


def main(argv: list[str] | None = None) -> int:
    def error(text: str) -> None:  # one plain line, never wrapped
        print(text.replace("\n", " "), file=sys.stderr)

    from ..collector import skip_unused_imports

    skip_unused_imports()  # before anything imports nbformat or nbgrader (see grader.collector)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage line
        return EXIT_USAGE if exc.code else EXIT_OK
    # `grade` makes its console only to print a summary: rich is not imported before its sandbox starts,
    # nor at all for --json.
    console = None if args.func is cmd_grade else make_console()
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

    from ..collector import end_process

    code = main()
    atexit._run_exitfuncs()
    end_process(code)
