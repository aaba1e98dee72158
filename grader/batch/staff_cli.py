"""The staff's commands on a graded batch: manual scores, overrides, and the gradebook CSV an LMS imports
(``seqgrade manual``, ``override``, ``export-grades``). Registered by grader.cli, which prints their errors."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from grader.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console


def _republish(outdir: str, console: Console) -> int:
    """Rewrite a batch's outputs after the staff marks changed, saying what it does and what it noticed."""
    from grader.batch.publish import republish  # imports the registry and the report pages (seconds)

    _, notes = republish(outdir, lambda text: console.print(text, markup=False, highlight=False))
    _print_notes(console, notes)
    return 0


def _print_notes(console: Console, notes) -> None:
    for note in notes:
        console.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


def cmd_manual(args, console: Console) -> int:
    from . import manual

    if args.action == "export":
        if args.files or args.from_gradebook:
            raise UsageError("manual export takes only OUTDIR (and --to DIR)")
        for path in manual.export_answers(args.outdir, args.to):
            console.print(f"wrote {path}", markup=False, highlight=False, soft_wrap=True)
        return 0
    if bool(args.files) == bool(args.from_gradebook):
        raise UsageError("manual import needs score CSV files or --from-gradebook (one of the two)")
    from grader.batch.staff import staff_lock

    with staff_lock(args.outdir):  # the marks and the outputs written from them change together
        if args.from_gradebook:
            report = manual.import_from_gradebook(args.outdir, args.db, by=args.by or manual.FORMGRADER)
        else:
            report = manual.import_scores(args.outdir, args.files, by=args.by or "")
        console.print(
            f"manual scores: {report.applied} stored, {report.unchanged} unchanged, {report.skipped} rows left empty",
            markup=False,
            highlight=False,
        )
        return _republish(args.outdir, console)


def cmd_override(args, console: Console) -> int:
    from . import overrides

    if args.list:
        if args.student or args.target or args.points is not None or args.remove or args.confirm:
            raise UsageError("override --list takes only OUTDIR")
        sys.stdout.write(overrides.listing(args.outdir, every=args.all))
        return 0
    if not args.student or not args.target:
        raise UsageError(
            "override needs OUTDIR STUDENT EXERCISE[.CHECK] POINTS --reason TEXT (or --list, --confirm or --remove)"
        )
    from grader.batch.staff import staff_lock

    with staff_lock(args.outdir):  # the marks and the outputs written from them change together
        return _override(args, console, overrides)


def _override(args, console: Console, overrides) -> int:
    if args.remove or args.confirm:
        if args.points is not None or (args.remove and args.confirm):
            raise UsageError("override --remove and --confirm take no POINTS, and not both")
    if args.remove:
        target = overrides.remove_override(args.outdir, args.student, args.target)
        console.print(f"removed the override of {args.target} for {target.student}", markup=False, highlight=False)
    elif args.confirm:
        target, mark = overrides.confirm_override(args.outdir, args.student, args.target, by=args.by or "")
        console.print(
            f"{target.student} {args.target}: the override of {mark.points:g} points now applies to this "
            f"notebook (the grader gives {mark.grader_points:g})",
            markup=False,
            highlight=False,
        )
    else:
        if args.points is None:
            raise UsageError("override needs POINTS after EXERCISE[.CHECK]")
        try:
            points = float(args.points)
        except ValueError:
            raise UsageError(f"POINTS must be a number; got {args.points!r}") from None
        target, mark = overrides.set_override(
            args.outdir, args.student, args.target, points, args.reason or "", by=args.by or ""
        )
        console.print(
            f"{target.student} {args.target}: {mark.points:g} points (the grader gives {mark.grader_points:g})",
            markup=False,
            highlight=False,
        )
    return _republish(args.outdir, console)


def cmd_export_grades(args, console: Console) -> int:
    from dataclasses import replace

    from grader.batch.lms import lms_path
    from grader.batch.record import read_record, write_record

    record = read_record(args.outdir)
    if record.lms != args.lms:
        write_record(args.outdir, replace(record, lms=args.lms))
    from grader.batch.publish import republish

    _, notes = republish(args.outdir)
    _print_notes(console, notes)
    console.print(f"wrote {lms_path(args.outdir, args.lms)}", markup=False, highlight=False, soft_wrap=True)
    return 0


def add_staff_parsers(sub) -> None:
    p = sub.add_parser("manual", help="manual grading: export free-text answers, import the TA's scores")
    p.add_argument(
        "action",
        choices=("export", "import"),
        help="export: one HTML page and one CSV per question; "
        "import: store the scores filled into those CSVs (or formgrader's) and rewrite the outputs",
    )
    p.add_argument("outdir", metavar="OUTDIR", help="the --out folder of a `seqgrade batch`")
    p.add_argument(
        "files", nargs="*", metavar="SCORES.csv", help="import: CSV files with student, question, points (and comment)"
    )
    p.add_argument("--to", metavar="DIR", help="export: where to write the pages and CSVs (default OUTDIR/manual)")
    p.add_argument(
        "--from-gradebook", action="store_true", help="import: take the manual scores entered in nbgrader's formgrader"
    )
    p.add_argument("--db", metavar="URL", help="import --from-gradebook: the gradebook (default: the batch's)")
    p.add_argument("--by", metavar="NAME", help="import: who scored them (stored with each score)")
    p.set_defaults(func=cmd_manual)
    p = sub.add_parser("override", help="set, list or remove a TA's override of one check's points for one student")
    p.add_argument("outdir", metavar="OUTDIR", help="the --out folder of a `seqgrade batch`")
    p.add_argument(
        "student",
        nargs="?",
        metavar="STUDENT",
        help="the student id as in grades.csv, or the name or email the export gives",
    )
    p.add_argument(
        "target", nargs="?", metavar="EXERCISE[.CHECK]", help="the check (an exercise alone when it has one check)"
    )
    p.add_argument("points", nargs="?", metavar="POINTS", help="the points the check gives this student")
    p.add_argument("--reason", metavar="TEXT", help="why (required; shown on the student's feedback page)")
    p.add_argument("--by", metavar="NAME", help="who set it")
    p.add_argument("--remove", action="store_true", help="remove the override of STUDENT EXERCISE[.CHECK]")
    p.add_argument(
        "--confirm",
        action="store_true",
        help="apply the override of STUDENT EXERCISE[.CHECK] to the "
        "notebook as it is now (an override made on code the student has changed since is set aside)",
    )
    p.add_argument("--list", action="store_true", help="list the overrides")
    p.add_argument("--all", action="store_true", help="with --list: manual scores too")
    p.set_defaults(func=cmd_override)
    p = sub.add_parser("export-grades", help="write the CSV a Canvas or Gradescope gradebook imports")
    p.add_argument("outdir", metavar="OUTDIR", help="the --out folder of a `seqgrade batch`")
    p.add_argument("--lms", choices=("canvas", "gradescope"), required=True, help="the gradebook to import it into")
    p.set_defaults(func=cmd_export_grades)
