"""The instructor's commands on the course itself: ``release`` (one assignment, or ``--all``),
``new-exercise`` and ``sync-points``. ``grader.cli`` registers them; nothing slow is imported until a
command runs."""

from __future__ import annotations

from pathlib import Path

from grader.errors import UsageError

EXIT_OK, EXIT_DIFFERS = 0, 1


def _say(console, text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def add_course_parsers(sub) -> None:
    p = sub.add_parser("release", help="write the student (or solution) version of an assignment, or of all of them")
    p.add_argument(
        "assignment",
        nargs="?",
        metavar="ASSIGNMENT",
        help="assignment id (see `seqgrade list`); leave it out with --all",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="folder to write the notebook and its files into "
        "(with --all: the student versions, one folder per assignment)",
    )
    p.add_argument("--solutions", action="store_true", help="keep the solutions (hidden tests are still removed)")
    p.add_argument(
        "--all",
        action="store_true",
        help="every assignment: student versions into --out and solution versions into --solutions-out",
    )
    p.add_argument(
        "--solutions-out",
        metavar="DIR",
        help="with --all: where the solution versions go (a folder apart from --out, which is what students get)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="release even while a notebook still holds the placeholder "
        "text seqgrade new-exercise wrote (each cell is named in a warning)",
    )
    p.set_defaults(func=cmd_release)
    p = sub.add_parser(
        "new-exercise",
        help="add a declared exercise's cells (text, solution, self-check, "
        "autograded test; for a written question, its text and answer cell) to "
        "its assignment's source notebook",
    )
    p.add_argument("assignment", metavar="ASSIGNMENT", help="assignment id (see `seqgrade list`)")
    p.add_argument(
        "name",
        metavar="NAME",
        help="the exercise's id, as declared in grader/assignments/ASSIGNMENT/"
        '__init__.py (a function, an answer, or a written question: kind "manual" with manual_points)',
    )
    p.add_argument(
        "--after",
        metavar="EXERCISE",
        help="put the cells after this exercise's (default: after the exercise declared just before NAME)",
    )
    p.set_defaults(func=cmd_new_exercise)
    p = sub.add_parser(
        "sync-points",
        help="make the points a source notebook states (autograded cells, section "
        "headings, the introduction's total) agree with the declaration",
    )
    p.add_argument("assignment", metavar="ASSIGNMENT", help="assignment id (see `seqgrade list`)")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if the notebook disagrees")
    p.set_defaults(func=cmd_sync_points)


def _known(assignment: str) -> None:
    from grader.assignments import assignment_ids

    if assignment not in assignment_ids():
        raise UsageError(f"unknown assignment {assignment!r}; the course has {', '.join(assignment_ids())}")


def cmd_release(args, console) -> int:
    from .release import release, release_all

    if args.all:
        if args.assignment or args.solutions:
            raise UsageError(
                "--all releases every assignment, students' and solution versions: give no ASSIGNMENT "
                "and no --solutions, and --solutions-out DIR for the solutions"
            )
        if not args.solutions_out:
            raise UsageError(
                "--all writes the solution versions too: give --solutions-out DIR (a folder apart from "
                "--out, which is what students get)"
            )
        if args.force:
            from .release import course_order

            for assignment in course_order():
                _warn_placeholders(console, assignment)
        for student, solution in release_all(args.out, args.solutions_out, force=args.force):
            _say(console, f"{student.name}: student version in {student}, solution version in {solution}")
        return EXIT_OK
    if not args.assignment:
        raise UsageError("name an ASSIGNMENT to release (see `seqgrade list`), or give --all")
    if args.solutions_out:
        raise UsageError("--solutions-out goes with --all; for one assignment use --solutions")
    if args.force:
        _warn_placeholders(console, args.assignment)
    folder = release(args.assignment, args.out, solutions=args.solutions, force=args.force)
    _say(console, f"wrote the {'solution' if args.solutions else 'student'} version to {folder}")
    return EXIT_OK


def _warn_placeholders(console, assignment: str) -> None:
    """With --force: say which cells ship new-exercise's placeholder text."""
    import nbformat

    from .release import placeholders_left, source_dir

    for path in sorted(source_dir(assignment).glob("*.ipynb")):
        for cell, text in placeholders_left(nbformat.read(path, as_version=4)):
            _say(
                console,
                f"warning: {path.name}, cell {cell} still holds the placeholder {text!r} (released with --force)",
            )


def _show(console, report) -> None:
    for change in report.changed:
        _say(console, f"{report.path.name}: {change}")
    for note in report.notes:
        _say(console, f"to do: {note}")


def cmd_new_exercise(args, console) -> int:
    _known(args.assignment)
    from .scaffold import add_exercise_cells

    _show(console, add_exercise_cells(args.assignment, args.name, after=args.after))
    return EXIT_OK


def cmd_sync_points(args, console) -> int:
    _known(args.assignment)
    from .scaffold import sync_points

    report = sync_points(args.assignment, write=not args.check)
    _show(console, report)
    if not report.changed:
        _say(console, f"{Path(report.path).name}: every point it states agrees with the declaration")
    return EXIT_DIFFERS if args.check and report.changed else EXIT_OK
