"""CSV files an LMS gradebook imports as they are.

Canvas (Grades > Import): the columns of Canvas's own gradebook export, ``Student, ID, SIS User ID,
SIS Login ID, Section``, then one column per assignment; Canvas matches rows by ``ID`` (the Canvas
user id, which is the student id seqgrade takes from a Canvas export's file names) and creates an
assignment for a column name it does not know. Gradescope (an assignment's "Upload scores"): one row per
student with ``Name, SID, Email`` to match the roster and the score column.
"""

from __future__ import annotations

from pathlib import Path

from grader.fsutil import write_atomic
from grader.results import NotebookResult

from .csvfile import csv_text

CANVAS_HEADER = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
GRADESCOPE_HEADER = ("Name", "SID", "Email")


HEADERS = {"canvas": CANVAS_HEADER, "gradescope": GRADESCOPE_HEADER}


def _person(lms: str, student: str, who) -> list[str]:
    """The cells before the score: Canvas's user columns (only ID known), or Gradescope's roster match."""
    name = who.name if who else ""
    return [name, student, "", "", ""] if lms == "canvas" else [name, student, who.email if who else ""]


def lms_csv(lms: str, column: str, results: dict[str, NotebookResult], people: dict) -> str:
    """The text of the import file for ``lms`` ("canvas" or "gradescope"); ``column`` names the score column."""
    if lms not in HEADERS:
        raise ValueError(f"unknown LMS {lms!r}")
    return csv_text(
        [*HEADERS[lms], column], ([*_person(lms, s, people.get(s)), results[s].score] for s in sorted(results))
    )


def lms_path(outdir: str | Path, lms: str) -> Path:
    return Path(outdir) / f"{lms}-grades.csv"


def write_lms_csv(outdir: str | Path, lms: str, column: str, results: dict[str, NotebookResult], people: dict) -> Path:
    path = lms_path(outdir, lms)
    write_atomic(path, lms_csv(lms, column, results, people))
    return path
