"""CSV files an LMS gradebook imports as they are.

Canvas (Grades > Import): the columns of Canvas's own gradebook export, ``Student, ID, SIS User ID,
SIS Login ID, Section``, then one column per assignment; Canvas matches rows by ``ID`` (the Canvas
user id, which is the student id seqgrade takes from a Canvas export's file names) and creates an
assignment for a column name it does not know. Gradescope (an assignment's "Upload scores"): one row per
student with ``Name, SID, Email`` to match the roster and the score column.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from ..fsutil import write_atomic
from ..results import NotebookResult

CANVAS_HEADER = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
GRADESCOPE_HEADER = ("Name", "SID", "Email")


def lms_csv(lms: str, column: str, results: dict[str, NotebookResult], people: dict) -> str:
    """The text of the import file for ``lms`` ("canvas" or "gradescope"); ``column`` names the score column."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if lms == "canvas":
        writer.writerow([*CANVAS_HEADER, column])
        for student in sorted(results):
            who = people.get(student)
            writer.writerow([who.name if who else "", student, "", "", "", f"{results[student].score:g}"])
    elif lms == "gradescope":
        writer.writerow([*GRADESCOPE_HEADER, column])
        for student in sorted(results):
            who = people.get(student)
            writer.writerow([who.name if who else "", student, who.email if who else "", f"{results[student].score:g}"])
    else:
        raise ValueError(f"unknown LMS {lms!r}")
    return buf.getvalue()


def lms_path(outdir: str | Path, lms: str) -> Path:
    return Path(outdir) / f"{lms}-grades.csv"


def write_lms_csv(outdir: str | Path, lms: str, column: str, results: dict[str, NotebookResult], people: dict) -> Path:
    path = lms_path(outdir, lms)
    write_atomic(path, lms_csv(lms, column, results, people))
    return path
