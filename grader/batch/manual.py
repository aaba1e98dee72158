"""Manual grading of free-text questions: export every student's answer (one HTML page and one CSV per
question), take back the scores a TA typed into the CSV or into nbgrader's formgrader, and store them
as staff marks.

An import is all or nothing: every row is checked first (a student by id, or by the LMS's name or email
of exactly one student; a known question; a number within [0, max points]); the first bad row raises
``ScoreFileError`` naming its row and column and nothing is stored. Rows with an empty ``points`` cell are skipped
(not graded yet).

A score is bound to the answer it scored (``StoredMark.answer_sha256``): the answer in the row when the
file has the export's ``answer`` column and the cell is not empty (what the TA read), else the answer the batch
holds now. A score whose answer has changed since is set aside: the export shows "answer changed since scored" in
its ``note`` column, with the old score, and leaves ``points`` empty for the TA to score it again.
"""

from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.errors import ScoreFileError, StudentNotFound, UsageError
from grader.fsutil import ensure_writable_dir, write_atomic
from grader.results import MANUAL_CHECK, StaffMark

from .csvfile import csv_text, unquoted
from .people import resolve_student
from .record import BatchRecord, read_record
from .staff import StoredMark, Target, answer_digest, editing_marks, load_marks, points_allowed

if TYPE_CHECKING:
    from grader.assignments.registry import Assignment

EXPORT_COLUMNS = ("student", "notebook", "question", "answer", "max_points", "points", "comment", "note")
STALE = "answer changed since scored"
AS_RELEASED = "unanswered: the cell is empty or as released, 0 points unless you score it"
REQUIRED_COLUMNS = ("student", "question", "points")
FORMGRADER = "formgrader"


@dataclass(frozen=True)
class ImportReport:
    applied: int  # marks stored (new or changed)
    unchanged: int
    skipped: int  # rows left empty


def manual_questions(assignment: Assignment) -> dict[str, float]:
    return {e.id: float(e.points) for e in assignment.exercises if e.kind == "manual"}


def _require_questions(assignment: Assignment) -> dict[str, float]:
    questions = manual_questions(assignment)
    if not questions:
        raise UsageError(f"{assignment.id} has no manually graded questions")
    return questions


# ---- export -------------------------------------------------------------------------------------

PAGE_STYLE = """body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
section{border-top:1px solid #ccc;padding:.5rem 0}h2{font-size:1rem;margin:.5rem 0}
.answer{background:#f6f6f6;padding:0 .75rem;border-radius:4px;overflow-wrap:anywhere}
.none{color:#888}.meta{color:#555;font-size:.9rem}.stale{color:#a33}"""


def render_answer(text: str) -> str:
    """A student's markdown as HTML with every raw HTML tag escaped (markdown-it's ``html`` off), unsafe
    link schemes refused (markdown-it's own check) and images left as text (nothing is fetched)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).disable("image").render(text)


def standing(stored: StoredMark | None, answer: str, max_points: float) -> tuple[StaffMark | None, str]:
    """(the score that holds for ``answer``, or None; a note for the TA when a score was set aside)."""
    if stored is None or not stored.answer_changed(answer):
        return (stored.mark if stored else None), ""
    old = stored.mark
    return None, (
        f"{STALE} (it had {old.points:g}/{max_points:g}"
        + (f" by {old.by}" if old.by else "")
        + (f": {old.reason}" if old.reason else "")
        + ")"
    )


def answers_page(assignment: Assignment, question: str, max_points: float, record: BatchRecord, marks: dict) -> str:
    """A self-contained page of every answer to ``question``: markdown rendered with raw HTML escaped, no
    scripts (the page's content security policy also forbids any), nothing loaded from elsewhere."""
    parts = []
    for student, who in sorted(record.students.items()):
        answer = who.answers.get(question, "")
        mark, note = standing(marks.get(Target(student, question, MANUAL_CHECK)), answer, max_points)
        scored = (
            f" · scored {mark.points:g}/{max_points:g}"
            + (f": {html.escape(mark.reason)}" if mark and mark.reason else "")
            if mark
            else ""
        )
        note = note or (AS_RELEASED if mark is None and question in who.unanswered else "")
        scored += f' · <b class="stale">{html.escape(note)}</b>' if note else ""
        label = " · ".join(filter(None, [html.escape(who.name), html.escape(who.notebook)]))
        body = (
            f'<div class="answer">{render_answer(answer)}</div>'
            if answer.strip()
            else '<p class="none">(no answer: the notebook has no cell with this question\'s id, or it is empty)</p>'
        )
        parts.append(
            f'<section id="{html.escape(student, quote=True)}"><h2>{html.escape(student)}</h2>'
            f'<p class="meta">{label}{scored}</p>{body}</section>'
        )
    title = html.escape(f"{assignment.id}: {question} ({max_points:g} points), {len(record.students)} answers")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{title}</title><style>{PAGE_STYLE}</style></head><body><h1>{title}</h1>"
        "<p>Score them in the CSV beside this page (points and comment columns), then run "
        "<code>seqgrade manual import</code>.</p>" + "".join(parts) + "</body></html>\n"
    )


def answers_csv(question: str, max_points: float, record: BatchRecord, marks: dict) -> str:
    """One row per student; points and comment are empty unless a score for the answer shown is stored."""
    rows = []
    for student, who in sorted(record.students.items()):
        answer = who.answers.get(question, "")
        mark, note = standing(marks.get(Target(student, question, MANUAL_CHECK)), answer, max_points)
        note = note or (AS_RELEASED if mark is None and question in who.unanswered else "")
        rows.append(
            [
                student,
                who.notebook,
                question,
                answer,
                max_points,
                mark.points if mark else "",
                mark.reason if mark else "",
                note,
            ]
        )
    return csv_text(EXPORT_COLUMNS, rows)


def export_answers(outdir: str | Path, to: str | Path | None = None) -> list[Path]:
    """Write ``<question>.html`` and ``<question>.csv`` for each manual question to ``to`` (default
    OUTDIR/manual); return the paths written."""
    record = read_record(outdir)  # first: says at once when OUTDIR holds no batch
    from grader.assignments.registry import get_assignment

    assignment = get_assignment(record.assignment)
    questions = _require_questions(assignment)
    marks = load_marks(outdir)
    folder = Path(to) if to else Path(outdir) / "manual"
    try:
        ensure_writable_dir(folder)
    except OSError as exc:
        from grader.errors import OutputNotWritable

        raise OutputNotWritable(folder, exc.strerror or str(exc)) from None
    written = []
    for question, max_points in questions.items():
        write_atomic(folder / f"{question}.html", answers_page(assignment, question, max_points, record, marks))
        write_atomic(folder / f"{question}.csv", answers_csv(question, max_points, record, marks))
        written += [folder / f"{question}.html", folder / f"{question}.csv"]
    return written


# ---- import -------------------------------------------------------------------------------------


def _number(text: str, path, row: int, column: str, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ScoreFileError(path, row, column, f"{text!r} is not a number") from None
    if not points_allowed(value, high):
        raise ScoreFileError(path, row, column, f"{text} is outside [0, {high:g}]")
    return value


def _delimiter(text: str) -> str:
    """ "," for a CSV file; ";" for the one a spreadsheet in a locale with the decimal comma saves (its header holds
    the required columns only when split at semicolons)."""
    first = text.splitlines()[0] if text else ""
    names = lambda sep: {h.strip().lower() for h in first.split(sep)}  # noqa: E731
    return ";" if not set(REQUIRED_COLUMNS) <= names(",") and set(REQUIRED_COLUMNS) <= names(";") else ","


def read_score_file(path: str | Path, record: BatchRecord, questions: dict[str, float], by: str) -> tuple[dict, int]:
    """(Target -> StoredMark for every filled row, number of rows left empty); ScoreFileError on the first bad row.
    Cells are read as the export wrote them (``csvfile.unquoted``); each score is bound to the row's answer
    when the file has an answer column, else to the answer the batch holds."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a spreadsheet may save a byte-order mark
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text; save it from the spreadsheet as CSV (UTF-8)") from None
    delimiter = _delimiter(text)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = [h.strip().lower() for h in reader.fieldnames or []]  # Student, POINTS: as a spreadsheet may write them
    for column in REQUIRED_COLUMNS:
        if column not in header:
            raise ScoreFileError(
                path, 0, column, f"missing column; the file needs {', '.join(REQUIRED_COLUMNS)} (and may have comment)"
            )
    reader.fieldnames = header
    marks, seen, skipped = {}, {}, 0
    for row_number, row in enumerate(reader, start=2):  # row 1 is the header
        if None in row:
            raise ScoreFileError(
                path,
                row_number,
                header[-1],
                f"the row has {len(header) + len(row[None])} cells, the header {len(header)}",
            )
        student, question = (row.get("student") or "").strip(), (row.get("question") or "").strip()
        points_text, comment = (row.get("points") or "").strip(), unquoted((row.get("comment") or "").strip())
        if not student and not question and not points_text:
            continue  # a blank line
        try:  # an id, or the LMS's name or email of one student
            student = resolve_student(record.students, student if student in record.students else unquoted(student))
        except StudentNotFound as exc:
            raise ScoreFileError(path, row_number, "student", str(exc)) from None
        if question not in questions:
            raise ScoreFileError(
                path, row_number, "question", f"unknown question {question!r}; manual questions: {', '.join(questions)}"
            )
        if not points_text:
            skipped += 1
            continue
        if delimiter == ";" and points_text.count(",") == 1 and "." not in points_text:
            points_text = points_text.replace(",", ".")  # the decimal comma of the locales whose lists use ";"
        points = _number(points_text, path, row_number, "points", questions[question])
        target = Target(student, question, MANUAL_CHECK)
        if target in seen:
            raise ScoreFileError(
                path, row_number, "student", f"{student} {question} was already scored in row {seen[target]}"
            )
        seen[target] = row_number
        given = unquoted(row["answer"] or "") if "answer" in header else ""
        # the answer the TA read in the row; a row whose answer cell was cleared (or a file without the column)
        # scores the answer the batch holds
        scored = given if given.strip() else record.students[student].answers.get(question, "")
        marks[target] = StoredMark(
            StaffMark(kind="manual", points=points, reason=comment, by=by), answer_sha256=answer_digest(scored)
        )
    return marks, skipped


def import_scores(outdir: str | Path, files: list[str | Path], *, by: str = "") -> ImportReport:
    """Check every row of every file, then store all their scores as manual marks (or none)."""
    record = read_record(outdir)  # first: says at once when OUTDIR holds no batch
    from grader.assignments.registry import get_assignment

    questions = _require_questions(get_assignment(record.assignment))
    new, skipped, origin = {}, 0, {}
    for path in files:
        marks, empty = read_score_file(path, record, questions, by)
        for target in marks:
            if target in origin:
                raise ScoreFileError(
                    path, 0, "", f"{target.student} {target.exercise} is also scored in {origin[target]}"
                )
            origin[target] = path
        new.update(marks)
        skipped += empty
    return _store(outdir, record, new, skipped)


def import_from_gradebook(outdir: str | Path, db_url: str | None = None, *, by: str = FORMGRADER) -> ImportReport:
    """Store the manual scores typed into nbgrader's formgrader (``manual_score`` of each manual
    question's grade cell) for the students of this batch."""
    record = read_record(outdir)
    from grader.assignments.registry import get_assignment

    from .outputs import read_gradebook_manual_scores

    assignment = get_assignment(record.assignment)
    questions = _require_questions(assignment)
    url = db_url or record.gradebook_url(outdir)
    new = {}
    for (student, question), points in read_gradebook_manual_scores(url, assignment, record.students).items():
        if not points_allowed(points, questions[question]):
            raise ScoreFileError(
                "the gradebook",
                0,
                "manual_score",
                f"{student} {question} has {points:g}, outside [0, {questions[question]:g}]",
            )
        new[Target(student, question, MANUAL_CHECK)] = StoredMark(
            StaffMark(kind="manual", points=points, reason="", by=by),
            answer_sha256=answer_digest(record.students[student].answers.get(question, "")),
        )
    return _store(outdir, record, new, 0)


def _store(outdir, record: BatchRecord, new: dict, skipped: int) -> ImportReport:
    applied = unchanged = 0
    with editing_marks(outdir, record.assignment) as marks:
        for target, mark in new.items():
            old = marks.get(target)
            if (
                old is not None
                and old.mark.kind == mark.mark.kind
                and old.mark.points == mark.mark.points
                and old.answer_sha256 == mark.answer_sha256
                and (old.mark.reason == mark.mark.reason or not mark.mark.reason)
            ):
                unchanged += 1  # e.g. the gradebook giving back a score seqgrade wrote there, without its comment
                continue
            marks[target] = mark
            applied += 1
    return ImportReport(applied=applied, unchanged=unchanged, skipped=skipped)
