"""``seqgrade gradescope-autograder`` (write the zip, and ``--try`` it on a notebook) and ``seqgrade
gradescope-run`` (what the zip's run_autograder calls). ``grader.cli`` registers them; nothing slow is
imported until a command runs."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from grader.errors import UsageError

EXIT_OK = 0


def add_gradescope_parsers(sub) -> None:
    from .config import VISIBILITIES

    p = sub.add_parser(
        "gradescope-autograder",
        help="write the autograder zip to upload to Gradescope for one assignment, or --try it on a notebook",
    )
    p.add_argument("assignment", help="assignment id (see `seqgrade list`)")
    p.add_argument(
        "--out", metavar="ZIP", help="where to write the zip (default autograder.zip; with --try, only when given)"
    )
    p.add_argument(
        "--visibility",
        choices=VISIBILITIES,
        default="visible",
        help="when students see the results (Gradescope's setting; default visible)",
    )
    p.add_argument(
        "--rate-limit",
        metavar="N/PERIOD",
        default="",
        help="grade at most N submissions per student per PERIOD (such as 3/24h, 1/30m, 5/1d); a submission "
        "beyond that gets its latest graded result again, with a message",
    )
    p.add_argument(
        "--try",
        dest="trial",
        metavar="NOTEBOOK",
        help="run the zip's run_autograder on NOTEBOOK in a temporary folder laid out like /autograder, "
        "with this machine's Python, and print the results.json Gradescope would read",
    )
    p.add_argument(
        "--submission-metadata",
        metavar="JSON",
        help="with --try: the submission_metadata.json to use "
        "(Gradescope's format; default: a first submission made now)",
    )
    p.set_defaults(func=cmd_gradescope_autograder)
    p = sub.add_parser(
        "gradescope-run",
        help="inside Gradescope's container (run by the zip's run_autograder): "
        "grade the submission and write results/results.json",
    )
    p.add_argument(
        "--root", metavar="DIR", help="the autograder folder (default $SEQGRADE_AUTOGRADER_ROOT or /autograder)"
    )
    p.set_defaults(func=cmd_gradescope_run)


def _say(console, text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def cmd_gradescope_autograder(args, console) -> int:
    from grader.assignments import assignment_ids

    if args.assignment not in assignment_ids():  # before the imports below, which load the checks and torch
        raise UsageError(f"unknown assignment {args.assignment!r}; the course has {', '.join(assignment_ids())}")
    if args.submission_metadata and not args.trial:
        raise UsageError("--submission-metadata goes with --try")
    if args.rate_limit:
        from .rate_limit import RateLimit

        RateLimit.parse(args.rate_limit)
    if args.trial and not Path(args.trial).is_file():
        raise UsageError(f"no such notebook: {args.trial}")
    metadata = None
    if args.submission_metadata:
        try:
            metadata = json.loads(Path(args.submission_metadata).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read {args.submission_metadata}: {exc}") from None
    from .autograder_zip import build_autograder

    options = dict(visibility=args.visibility, rate_limit=args.rate_limit)
    if not args.trial:
        out = build_autograder(args.assignment, args.out or "autograder.zip", **options)
        _say(console, f"wrote the Gradescope autograder for {args.assignment} to {out}")
        return EXIT_OK
    from .trial import try_autograder

    with tempfile.TemporaryDirectory(prefix="seqgrade-try-") as work:
        zip_path = build_autograder(args.assignment, args.out or Path(work) / "autograder.zip", **options)
        trial = try_autograder(zip_path, args.trial, work, metadata=metadata)
    print(f"run_autograder's log (Gradescope shows it to staff only):\n{trial.log.rstrip()}", file=sys.stderr)
    print(json.dumps(trial.results, indent=2))
    return EXIT_OK


def cmd_gradescope_run(args, console) -> int:
    from .container import run_in_container

    run = run_in_container(Path(args.root) if args.root else None)
    lines = [f"results: {run.results_path}", f"isolation: {run.isolation or 'none (not graded)'}", run.summary]
    if run.detail:
        lines.append(run.detail)  # the autograder log is for course staff; students see results.json only
    _say(console, "\n".join(lines))
    return 1 if run.detail else EXIT_OK  # 1: a fault of the grader itself (results.json says so)
