"""``seqgrade serve``: start, stop or ask after the warm grading server that ``seqgrade grade`` hands notebooks to."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from ..errors import UsageError
from .terminal import EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console


def cmd_serve(args, console: Console) -> int:
    from .. import server

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
            say(
                f"grading server pid {found['pid']} at {found['address']}, since {since}, "
                f"{found['graded']} notebook(s) graded{current}"
            )
        return EXIT_OK
    if args.detach:
        found = server.start_detached(args.idle_exit, args.isolation)
        say(
            f"grading server ready: pid {found['pid']} at {found['address']}; `seqgrade grade` uses it. "
            f"It stops after {args.idle_exit:g} s without a request, or with `seqgrade serve --stop`."
        )
        return EXIT_OK

    def ready(where) -> None:
        print(
            f"seqgrade: grading server ready at {where}; `seqgrade grade` uses it. Ctrl-C stops it.",
            file=sys.stderr,
            flush=True,
        )

    try:
        from grader.server import serving

        graded = serving.serve(args.idle_exit, on_ready=ready, isolation=args.isolation)
    except KeyboardInterrupt:
        return EXIT_OK
    print(f"seqgrade: grading server stopped after grading {graded} notebook(s)", file=sys.stderr)
    return EXIT_OK
