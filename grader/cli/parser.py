"""The ``seqgrade`` argument parser: every command, its arguments and their help, and the function that runs it."""

from __future__ import annotations

import argparse

from grader.jail.limits import ISOLATION_LEVELS

from .arguments import add_limit_options
from .batch import cmd_batch
from .demo import cmd_demo
from .grade import cmd_grade
from .listing import cmd_list
from .serve import cmd_serve


def build_parser() -> argparse.ArgumentParser:
    from ..version import __version__

    parser = argparse.ArgumentParser(
        prog="seqgrade", description="Sandboxed, property-based grading of sequence-model notebooks."
    )
    parser.add_argument("--version", action="version", version=f"seqgrade {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("grade", help="grade one notebook")
    p.add_argument(
        "notebook", metavar="NOTEBOOK.ipynb", help="the submitted notebook (a folder of them: use `seqgrade batch`)"
    )
    p.add_argument("--assignment", help="assignment id (default: from the notebook's metadata or file name)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document")
    p.add_argument("--feedback", metavar="OUT.html", help="write a self-contained HTML feedback page")
    p.add_argument("--backend", choices=("sandbox", "inprocess"), default="sandbox", help=argparse.SUPPRESS)
    p.add_argument(
        "--no-server",
        action="store_true",
        help="grade in this process even when a grading server (`seqgrade serve`) is running",
    )
    add_limit_options(p)
    p.set_defaults(func=cmd_grade)
    p = sub.add_parser(
        "serve",
        help="keep a warm grader running that `seqgrade grade` hands notebooks to "
        "(then each grade takes well under a second instead of about two)",
    )
    p.add_argument("--detach", action="store_true", help="start it in the background and return once it is ready")
    p.add_argument(
        "--idle-exit",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="stop after this long without a request (default 3600)",
    )
    p.add_argument("--stop", action="store_true", help="stop the running server")
    p.add_argument("--status", action="store_true", help="say whether a server is running, and since when")
    p.add_argument(
        "--isolation",
        choices=ISOLATION_LEVELS,
        default="namespaces",
        help="the sandbox the server starts with ('rlimits' only for machines without namespaces; "
        "`seqgrade grade --isolation` still chooses per notebook)",
    )
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("list", help="list assignments, exercises, checks and points")
    p.set_defaults(func=cmd_list)
    from grader.course.cli import add_course_parsers

    add_course_parsers(sub)
    p = sub.add_parser("batch", help="grade a folder, nbgrader tree or LMS export of notebooks")
    p.add_argument(
        "submissions", metavar="SUBMISSIONS", help="a folder, an nbgrader submitted/ tree, or a Canvas/Gradescope .zip"
    )
    p.add_argument("--assignment", required=True, metavar="ID", help="assignment id (see `seqgrade list`)")
    p.add_argument(
        "--out",
        required=True,
        metavar="OUTDIR",
        help="where grades.csv, summary.html, results/, feedback/ and the gradebook go (a rerun reuses it)",
    )
    p.add_argument("--workers", type=int, default=None, metavar="N", help="parallel workers (default: one per core)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on an existing Dask cluster, e.g. tcp://10.0.0.5:8786")
    p.add_argument(
        "--db",
        metavar="URL",
        help="gradebook database URL, without a password: it is kept in OUTDIR/batch.json "
        "(default: sqlite file OUTDIR/gradebook.db)",
    )
    p.add_argument("--gradescope", action="store_true", help="also write OUTDIR/gradescope/<student>/results.json")
    p.add_argument(
        "--lms",
        choices=("canvas", "gradescope"),
        help="also write OUTDIR/<lms>-grades.csv, which that LMS's gradebook imports",
    )
    p.add_argument(
        "--late-policy", metavar="POLICY.json", help="the late policy (default: the course config's, if any)"
    )
    p.add_argument(
        "--extensions", metavar="CSV", help="extensions: student, due, reason (instead of the policy's own file)"
    )
    p.add_argument("--file-times", action="store_true", help="a folder's file times are the submission times")
    add_limit_options(p)
    p.set_defaults(func=cmd_batch)
    p = sub.add_parser("demo", help="release, make sample submissions, grade them all, and show the reports")
    p.add_argument(
        "--out", default="demo-out", metavar="DIR", help="where the demo writes everything (default demo-out)"
    )
    p.set_defaults(func=cmd_demo)
    from grader.batch.staff_cli import add_staff_parsers

    add_staff_parsers(sub)
    from grader.batch.similarity_command import add_parser as add_similarity

    add_similarity(sub)
    from grader.gradescope.cli import add_gradescope_parsers

    add_gradescope_parsers(sub)
    from grader.audit.cli import add_audit_parser

    add_audit_parser(sub)
    return parser
