"""``seqgrade audit``: the command line of the mutation audit. ``grader.cli`` registers it; this module
imports nothing slow until the command runs."""

from __future__ import annotations

import sys
import time

from grader.errors import OutputNotWritable, UsageError
from grader.jail.limits import ISOLATION_LEVELS

EXIT_BELOW_FLOORS = 4  # the audit ran and missed a floor of the triage file


def add_audit_parser(sub) -> None:
    p = sub.add_parser(
        "audit",
        help="mutation analysis: how many wrong versions of the solution the checks and the "
        "self-checks catch, what survives, what is charged twice",
    )
    p.add_argument("assignment", metavar="ASSIGNMENT", help="assignment id (see `seqgrade list`)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON document")
    p.add_argument("--html", metavar="OUT.html", help="also write the whole report as a page")
    p.add_argument("--workers", type=int, default=None, metavar="N", help="parallel workers (default: one per core)")
    p.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help="audit at most N mutants per exercise (the same ones every run)",
    )
    p.add_argument("--only", action="append", default=[], metavar="MUTANT", help="audit only this mutant (repeatable)")
    p.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="MUTANT",
        help="record MUTANT as reviewed (equivalent, or not worth a check) in the assignment's triage file, "
        "assignments/audit/ASSIGNMENT.json; needs --reason (repeatable; nothing is graded)",
    )
    p.add_argument("--reason", metavar="TEXT", help="with --accept: why")
    p.add_argument("--by", metavar="NAME", default="", help="with --accept: who reviewed it")
    p.add_argument(
        "--inprocess",
        action="store_true",
        help="grade mutants in the workers' own processes, without the sandbox (no CPU or memory limits)",
    )
    p.add_argument(
        "--isolation",
        choices=ISOLATION_LEVELS,
        default="namespaces",
        help="'rlimits' drops the filesystem and network jail: only for machines without namespaces",
    )
    p.set_defaults(func=cmd_audit)


def _accept(args, console) -> int:
    from grader.assignments.registry import get_assignment

    from .run import mutants_of
    from .triage import accept, read_triage, write_triage

    if args.json or args.html or args.only or args.sample is not None:
        raise UsageError("--accept records triage only: it takes --reason and --by, no other option")
    triage = read_triage(args.assignment)
    path = write_triage(
        accept(triage, mutants_of(get_assignment(args.assignment)), args.accept, args.reason or "", args.by)
    )
    console.print(f"accepted {', '.join(args.accept)} in {path}", markup=False, highlight=False, soft_wrap=True)
    return 0


def cmd_audit(args, console) -> int:
    from grader.assignments import assignment_ids

    if args.assignment not in assignment_ids():  # before torch and the checks are imported
        raise UsageError(f"unknown assignment {args.assignment!r}; the course has {', '.join(assignment_ids())}")
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1; got {args.workers}")
    if args.sample is not None and args.sample < 1:
        raise UsageError(f"--sample must be at least 1; got {args.sample}")
    if args.accept:
        return _accept(args, console)
    if args.reason:
        raise UsageError("--reason goes with --accept MUTANT")
    from grader.jail.limits import Limits

    from .run import AuditOptions, audit

    options = AuditOptions(
        backend="inprocess" if args.inprocess else "sandbox",
        workers=args.workers,
        sample=args.sample,
        only=tuple(args.only),
        limits=Limits(isolation=args.isolation),
    )
    said = [0.0]

    def progress(done: int, total: int) -> None:  # a line every 10 seconds or so, on stderr
        if time.monotonic() - said[0] > 10 or done == total:
            said[0] = time.monotonic()
            print(f"seqgrade audit: {done}/{total} notebooks graded", file=sys.stderr, flush=True)

    report = audit(args.assignment, options, progress)
    if args.html:
        from grader.fsutil import write_atomic

        from .render import to_html

        try:
            write_atomic(args.html, to_html(report))
        except OSError as exc:
            raise OutputNotWritable(args.html, exc.strerror or str(exc)) from None
    if args.json:
        sys.stdout.write(report.to_json())
    else:
        _print(report, console)
    return EXIT_BELOW_FLOORS if report.below_floors else 0


def _print(report, console) -> None:
    from .render import headline, sections, table

    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    say(headline(report))
    for line in table(report):
        say(line)
    for title, lines in sections(report):
        say(f"\n{title}:")
        for line in lines:
            say(f"  {line}")
