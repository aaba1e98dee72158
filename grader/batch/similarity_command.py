"""``seqgrade similarity OUTDIR``: compare the code of a graded batch's notebooks again (other thresholds, or
a batch graded before seqgrade kept code) and rewrite ``OUTDIR/similarity/`` and the summary page."""

from __future__ import annotations

from dataclasses import replace

from grader.errors import UsageError


def add_parser(sub) -> None:
    from .similarity import Settings

    d = Settings()
    p = sub.add_parser("similarity", help="find submissions whose code is too alike (clusters, side-by-side pages)")
    p.add_argument("outdir", metavar="OUTDIR", help="the --out folder of a `seqgrade batch`")
    p.add_argument(
        "--threshold",
        type=float,
        metavar="SHARE",
        help=f"list a pair when this share of one student's own code is shared (default {d.threshold:g}, "
        "or what the last run used)",
    )
    p.add_argument(
        "--min-shared",
        type=int,
        metavar="CHARS",
        help=f"and the shared passages add up to this many tokenized characters (default {d.min_shared})",
    )
    p.add_argument(
        "--min-run",
        type=int,
        metavar="CHARS",
        help=f"count only shared passages at least this many tokenized characters long (default {d.min_run})",
    )
    p.set_defaults(func=cmd_similarity)


def cmd_similarity(args, console) -> int:
    from grader.assignments.registry import get_assignment

    from .publish import republish
    from .record import read_record
    from .similarity import Settings, read_report, write_similarity

    record = read_record(args.outdir)
    previous = read_report(args.outdir)
    settings = previous.settings if previous is not None else Settings()
    try:
        if args.threshold is not None:
            settings = replace(settings, threshold=args.threshold)
        if args.min_shared is not None:
            settings = replace(settings, min_shared=args.min_shared)
        if args.min_run is not None:
            settings = replace(settings, min_run=args.min_run)
    except ValueError:
        raise UsageError(
            f"--threshold is a share in (0, 1], --min-shared and --min-run counts >= 0; got "
            f"{args.threshold}, {args.min_shared}, {args.min_run}"
        ) from None
    report = write_similarity(args.outdir, get_assignment(record.assignment), sorted(record.students), settings)
    republish(args.outdir)  # the summary's section

    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    say(
        f"{report.students} notebooks compared: {len(report.pairs)} pair(s) in {len(report.clusters)} cluster(s); "
        f"the highest pair not listed scores {report.highest_unflagged:.0%}"
    )
    for cluster in report.clusters:
        say(f"  cluster of {len(cluster)}: {', '.join(cluster)}")
    say(f"pages: {args.outdir}/similarity/index.html")
    return 0
