"""The options ``grade`` and ``batch`` share, and what is checked of them before anything slow is imported:
the limits of a notebook's sandbox and the assignment id."""

from __future__ import annotations

import argparse
import sys

from grader.jail.limits import ISOLATION_LEVELS, Limits

from ..errors import UsageError

# Each limit option as the user types it; checked here, before anything slow is imported.
_POSITIVE_OPTIONS = (
    ("timeout", "--timeout"),
    ("call_cpu", "--call-cpu"),
    ("call_timeout", "--call-timeout"),
    ("memory_mb", "--memory-mb"),
)


def limits_of(args) -> Limits:
    for attr, option in _POSITIVE_OPTIONS:
        value = getattr(args, attr)
        if value is not None and not value > 0:
            raise UsageError(f"{option} must be positive; got {value:g}")
    try:
        limits = Limits(
            isolation=args.isolation,
            memory_mb=args.memory_mb,
            call_timeout_s=args.call_timeout,
            call_cpu_s=args.call_cpu,
        )
        return limits.with_timeout(args.timeout)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def say_what_is_not_hidden(limits: Limits) -> None:
    """One plain line when the isolation level asked for cannot hide this machine's files from student code."""
    from grader.sandbox.jails import what_it_cannot_hide

    said = what_it_cannot_hide(limits.isolation)
    if said:
        print(f"seqgrade: {said}", file=sys.stderr)


def check_assignment(name: str | None) -> None:
    """An unknown assignment id is a usage error, found without importing the checks (and torch)."""
    from ..assignments import assignment_ids

    if name is not None and name not in assignment_ids():
        raise UsageError(f"unknown assignment {name!r}; the course has {', '.join(assignment_ids())}")


def add_limit_options(p: argparse.ArgumentParser) -> None:
    d = Limits()
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"wall-clock budget of one notebook (default {d.submission_timeout_s:g})",
    )
    p.add_argument(
        "--call-cpu",
        type=float,
        default=d.call_cpu_s,
        metavar="SECONDS",
        help=f"user CPU time one call into student code may use, measured outside the sandbox "
        f"(default {d.call_cpu_s:g}; a function whose honest calls are heavier keeps its own "
        f"larger budget)",
    )
    p.add_argument(
        "--call-timeout",
        type=float,
        default=d.call_timeout_s,
        metavar="SECONDS",
        help=f"wall-clock backstop of one call (default {d.call_timeout_s:g}); a call that waits "
        f"without computing is stopped after {d.call_idle_s:g} s anyway",
    )
    p.add_argument(
        "--memory-mb",
        type=int,
        default=d.memory_mb,
        metavar="MB",
        help=f"address-space limit per student process, in MiB (default {d.memory_mb})",
    )
    p.add_argument(
        "--isolation",
        choices=ISOLATION_LEVELS,
        default="namespaces",
        help="'rlimits' drops the filesystem and network jail: only for machines without namespaces",
    )
