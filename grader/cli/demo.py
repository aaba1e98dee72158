"""``seqgrade demo``: release, make sample submissions, grade them all, and show the reports."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .terminal import EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console


def cmd_demo(args, console: Console) -> int:
    from grader.course.demo import run_demo

    run_demo(Path(args.out), console)
    return EXIT_OK
