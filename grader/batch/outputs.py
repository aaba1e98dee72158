"""Everything a batch writes: grades.csv, results/, feedback/, summary.html, Gradescope files, gradebook."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import warnings
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from grader.assignments.registry import Assignment
from grader.fsutil import write_atomic
from grader.report import summary
from grader.report.html import render
from grader.report.similarity import summary_section
from grader.results import FLAG_WORDS, UNANSWERED_KIND, NotebookResult

from .csvfile import csv_text
from .identity import file_stem
from .nbgrader_import import nbgrader_api, nbgrader_imported
from .similarity import pair_link, read_report


def fmt(x: float) -> str:
    return f"{x:g}"


class Written:
    """What a batch has written of each student during this run, so that publishing at its end writes only what
    changed since: the batch stores each result's JSON as soon as it is graded (an interrupted batch keeps it)
    and renders its feedback page then, from the result its end would show; when the end's result is equal
    (the staff marks and flags are the same), neither is serialized or rendered a second time."""

    def __init__(self):
        self.results: dict[str, tuple[NotebookResult, str]] = {}  # student -> (result without late, key) in results/
        self.pages: dict[str, NotebookResult] = {}  # student -> the result its feedback page shows


def write_page(outdir: Path, student: str, result: NotebookResult, written: Written | None = None) -> None:
    """feedback/<student>.html, unless ``written`` says it already shows ``result``."""
    if written is not None and written.pages.get(student) == result:
        return
    write_atomic(outdir / "feedback" / f"{file_stem(student)}.html", render(result))
    if written is not None:
        written.pages[student] = result


def write_result(
    outdir: Path, student: str, result: NotebookResult, key: str, *, page: bool = True, written: Written | None = None
) -> None:
    """results/<student>.json: what the grader decided, with the staff marks; the feedback page also shows the
    late charge, which the JSON leaves out (a changed late policy never changes it). A check with a staff mark
    gives the points that count, the staff's, as its ``points`` (as the page does); the grader's own are its
    ``staff.grader_points``. A result without staff marks is written exactly as ``seqgrade grade --json``.
    The JSON is written only when its bytes change; the page only when ``page``. ``written``: what this run has
    written already (neither is made again for an equal result)."""
    if page:
        write_page(outdir, student, result, written)
    stored = (replace(result, late=None), key)
    if written is not None and written.results.get(student) == stored:
        return
    data = stored[0].to_dict()
    for check in (c for e in data["exercises"] for c in e["checks"] if c.get("staff")):
        check["points"] = check["staff"]["points"]
    data["cache_key"] = key
    text = json.dumps(data, indent=2, allow_nan=False) + "\n"
    path = outdir / "results" / f"{file_stem(student)}.json"
    try:
        unchanged = path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        unchanged = False
    if not unchanged:
        write_atomic(path, text)
    if written is not None:
        written.results[student] = stored


def read_result(outdir: Path, student: str) -> tuple[NotebookResult, str] | None:
    """(the result ``write_result`` stored, with each check's points the grader's own again; its cache key)."""
    path = outdir / "results" / f"{file_stem(student)}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        for check in (c for e in data["exercises"] for c in e["checks"] if c.get("staff")):
            check["points"] = check["staff"]["grader_points"]
        return NotebookResult.from_dict(data), data.get("cache_key", "")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def reasons(result: NotebookResult, notes=()) -> str:
    """grades.csv's reason column: why a row is not simply a graded notebook, in plain words (``notes``:
    what applying the staff marks said, such as an override the grader now disagrees with)."""
    parts = [result.reason] if result.reason else []
    parts += [result.chosen] if result.chosen else []
    parts += [FLAG_WORDS[f] for f in result.flags]
    parts += [result.late.reason] if result.late is not None else []
    for e in result.exercises:
        for c in e.checks:
            if c.staff is not None and c.staff.kind == "override":
                parts.append(
                    f"overridden: {e.id}.{c.name} {c.staff.points:g} instead of {c.staff.grader_points:g}"
                    + (f" ({c.staff.reason})" if c.staff.reason else "")
                )
    parts += notes
    unanswered = [e.id for e in result.exercises if any(c.kind == UNANSWERED_KIND for c in e.checks)]
    if unanswered:
        parts.append(
            f"unanswered: {', '.join(unanswered)} (the answer is empty or as released: 0 points, nothing pending)"
        )
    pending = [e.id for e in result.exercises if e.pending_points]
    if pending:
        parts.append(f"manual pending: {', '.join(pending)} ({fmt(result.pending_points)} points)")
    return "; ".join(parts)


def write_summary(outdir: Path, assignment: Assignment, results: dict[str, NotebookResult], skipped: list) -> None:
    """The instructor's summary page, with the clusters of the batch's similarity report when it has one."""
    report = read_report(outdir)
    similarity = summary_section(report, pair_link(report) if report is not None else None)
    summary.write_summary(outdir, assignment, results, skipped, similarity)


def write_grades_csv(
    outdir: Path,
    assignment: Assignment,
    results: dict[str, NotebookResult],
    people: dict | None = None,
    notes: dict | None = None,
) -> None:
    """One row per student; ``people`` maps a student to its record (name, email) where known, ``notes``
    to what applying its staff marks said."""
    ids = [e.id for e in assignment.exercises]
    rows = []
    for student in sorted(results):
        r = results[student]
        who = (people or {}).get(student)
        scores = {e.id: e.score for e in r.exercises}
        rows.append(
            [
                student,
                r.score,
                r.max_score,
                r.pending_points,
                *(scores.get(i, 0) for i in ids),
                r.status,
                "yes" if "late" in r.flags or r.late is not None else "",
                who.name if who else "",
                who.email if who else "",
                reasons(r, (notes or {}).get(student, ())),
            ]
        )
    # total counts bonus points, max_score does not (a full score plus the bonus is above it)
    columns = [f"{e.id} (bonus)" if e.bonus else e.id for e in assignment.exercises]
    header = ["student_id", "total", "max_score", "pending", *columns, "status", "late", "name", "email", "reason"]
    write_atomic(outdir / "grades.csv", csv_text(header, rows))


def write_gradescope(outdir: Path, student: str, result: NotebookResult) -> None:
    """Gradescope's results.json for one student, the same document its autograder writes there."""
    from grader.gradescope.results_json import results_from_notebook

    data = results_from_notebook(result, visibility="visible")
    if result.late is not None:
        data["output"] += (
            f" Late policy: {result.late.reason}; the score is {result.score:g} instead of {result.points:g}."
        )
    write_atomic(outdir / "gradescope" / file_stem(student) / "results.json", json.dumps(data, indent=2) + "\n")


def alembic_head() -> str:
    """The newest revision of nbgrader's gradebook schema, read from its migration files (nbgrader itself
    would run the ``alembic`` command in a subprocess to learn it, seconds per new gradebook)."""
    spec = importlib.util.find_spec("nbgrader")
    versions = Path(next(iter(spec.submodule_search_locations))) / "alembic" / "versions"
    revisions, parents = set(), set()
    for path in versions.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        revisions.update(re.findall(r"^revision\s*=\s*['\"](\w+)['\"]", text, re.MULTILINE))
        for line in re.findall(r"^down_revision\s*=\s*(.+)$", text, re.MULTILINE):
            parents.update(re.findall(r"['\"](\w+)['\"]", line))
    heads = sorted(revisions - parents)
    if len(heads) != 1:
        raise RuntimeError(f"nbgrader's gradebook schema has {len(heads)} heads: {heads}")
    return heads[0]


def _create_empty_gradebook(db_url: str) -> None:
    """A new SQLite gradebook with nbgrader's tables and schema version, made without the alembic command."""
    nbgrader_imported()
    Base = nbgrader_api().Base
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(db_url, future=True)
    try:
        if inspect(engine).get_table_names():
            return
        Base.metadata.create_all(bind=engine)
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
            conn.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": alembic_head()})
    finally:
        engine.dispose()


def write_gradebook(
    db_url: str,
    assignment: Assignment,
    results: dict[str, NotebookResult],
    set_aside: dict[str, dict[str, float]] | None = None,
) -> None:
    """Store every score in nbgrader's gradebook, so `nbgrader export` and formgrader see them.
    ``set_aside``: student -> manual question -> points of a score set aside (the answer changed), which
    leaves the gradebook too (unless a TA has typed another score into formgrader since)."""
    nbgrader_imported()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy usage warns on every new submission
        with _opened_gradebook(db_url, assignment) as gb:
            _fill_gradebook(gb, Path(assignment.notebook).stem, assignment, results, set_aside or {})


def prepare_gradebook(db_url: str, assignment: Assignment, students: Sequence[str] = ()) -> None:
    """What the gradebook holds before any result: its tables, the assignment, its notebook and grade cells, and
    a submission of the assignment for each of ``students`` (made while the batch grades, by the thread that
    imported nbgrader: each is a commit, a wait on the disk, and a submission makes a row for each of its grade
    cells; write_gradebook finds them as they should be and only fills in the scores). The batch's students are
    known before it grades: each of them gets a row of the gradebook, graded or not. A submission made here has
    every grade marked as needing grading until write_gradebook fills it in, so the gradebook of a batch stopped
    before its end shows those students as not graded yet, not as scoring 0."""
    api = nbgrader_api()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _opened_gradebook(db_url, assignment) as gb:
            gb.db.registry().expire_on_commit = False  # as in _fill_gradebook: nothing read again after each commit
            known = {student for (student,) in gb.db.query(api.Student.id)}
            submitted = {
                student
                for (student,) in gb.db.query(api.SubmittedAssignment.student_id)
                .join(api.Assignment, api.Assignment.id == api.SubmittedAssignment.assignment_id)
                .filter(api.Assignment.name == assignment.id)
            }
            for student in sorted(students):
                if student not in known:
                    gb.add_student(student)
                if student not in submitted:
                    for notebook in gb.add_submission(assignment.id, student).notebooks:
                        for grade in notebook.grades:
                            grade.needs_manual_grade = True
            gb.db.commit()


@contextmanager
def _opened_gradebook(db_url: str, assignment: Assignment):
    """nbgrader's Gradebook at ``db_url`` (a SQLite one made first when missing) with ``assignment``'s notebook
    and grade cells in it."""
    import os
    import sys

    Gradebook = nbgrader_api().Gradebook

    # nbgrader runs the `alembic` command from PATH for a database it has to create (not a SQLite one,
    # which is created here); make sure this environment's own is found first.
    bindir = os.path.dirname(sys.executable)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    if db_url.startswith("sqlite:///"):
        _create_empty_gradebook(db_url)
    notebook = Path(assignment.notebook).stem
    with Gradebook(db_url) as gb:
        gb.update_or_create_assignment(assignment.id)
        gb.update_or_create_notebook(notebook, assignment.id)
        for ex in assignment.exercises:
            cell_id = ex.id if ex.kind == "manual" else f"test_{ex.id}"
            gb.update_or_create_grade_cell(
                cell_id,
                notebook,
                assignment.id,
                max_score=ex.max_points,
                cell_type="markdown" if ex.kind == "manual" else "code",
            )
        yield gb


def _fill_gradebook(
    gb, notebook: str, assignment: Assignment, results: dict[str, NotebookResult], set_aside: dict
) -> None:
    # A grade's name is its cell's (an association proxy that loads the cell, one query per grade): read the
    # names of the notebook's grade cells once, and find each grade's by the cell id the grade row holds.
    cell_names = {cell.id: cell.name for cell in gb.find_notebook(notebook, assignment.id).grade_cells}
    # nbgrader commits once a student (add_student, add_submission); by default each commit expires every object
    # the session holds, and the next student's add_submission reads the assignment, its notebook and its cells
    # again. Kept instead: those only seqgrade writes (a TA's formgrader writes grades). The submissions made ahead
    # and their grades (a TA's manual scores among them) are read together here, in this write's own session; a
    # student not made ahead is made and read at its turn.
    gb.db.registry().expire_on_commit = False
    made = _submitted_notebooks(gb, notebook, assignment.id)
    for student in sorted(results):
        r = results[student]
        submitted = made.get(student)
        if submitted is None:  # not made ahead (grader.batch.outputs.prepare_gradebook): made now
            gb.update_or_create_student(student)
            gb.update_or_create_submission(assignment.id, student)
            submitted = gb.find_submission_notebook(notebook, assignment.id, student)
        grades = {cell_names[g.cell_id]: g for g in submitted.grades}  # loaded with it, or one query
        for e in r.exercises:
            ex = assignment.exercise(e.id)
            cell_id = ex.id if ex.kind == "manual" else f"test_{ex.id}"
            grade = grades[cell_id]
            marks = [c.staff for c in e.checks if c.staff is not None]
            if ex.kind == "manual":
                if marks:  # seqgrade's manual score: nbgrader's manual_score
                    grade.manual_score = e.score
                    grade.needs_manual_grade = False
                else:  # a score typed into formgrader stays until imported
                    if grade.manual_score is not None and grade.manual_score == set_aside.get(student, {}).get(e.id):
                        grade.manual_score = None  # seqgrade's own, for an answer the student has changed since
                    if grade.manual_score is None:
                        grade.needs_manual_grade = bool(e.pending_points)  # not for a row with no answer
            elif ex.bonus:  # nbgrader's extra credit: its score counts, its maximum does not
                grade.auto_score, grade.manual_score = 0.0, None
                grade.extra_credit = e.score
                grade.needs_manual_grade = False
            else:
                grade.auto_score = _points_sum(c.points for c in e.checks)  # the grader's own points
                grade.manual_score = e.score if marks else None  # an override is nbgrader's manual score
                grade.needs_manual_grade = False
        # nbgrader's own place for a late charge: `nbgrader export` gives score = raw score - penalty
        penalty = _points_sum([r.points - r.score]) if r.late is not None else None
        submitted.late_submission_penalty = penalty
    gb.db.commit()


def _submitted_notebooks(gb, notebook: str, assignment_id: str) -> dict:
    """student -> that student's submitted ``notebook`` of the assignment, with its grades, for every submission
    the gradebook holds: two queries for the whole batch instead of four for each student (nbgrader's
    ``find_student``, ``find_submission``, ``find_submission_notebook`` and the grades)."""
    from sqlalchemy.orm import selectinload

    api = nbgrader_api()
    rows = (
        gb.db.query(api.SubmittedNotebook, api.SubmittedAssignment.student_id)
        .join(api.Notebook, api.Notebook.id == api.SubmittedNotebook.notebook_id)
        .join(api.SubmittedAssignment, api.SubmittedAssignment.id == api.SubmittedNotebook.assignment_id)
        .join(api.Assignment, api.Assignment.id == api.SubmittedAssignment.assignment_id)
        .filter(api.Notebook.name == notebook, api.Assignment.name == assignment_id)
        .options(selectinload(api.SubmittedNotebook.grades))
    )
    return {student: submitted for submitted, student in rows}


def _points_sum(values) -> float:
    return round(sum(values), 6) + 0.0


def read_gradebook_manual_scores(db_url: str, assignment: Assignment, students) -> dict[tuple[str, str], float]:
    """(student, manual question) -> the manual_score entered in nbgrader's formgrader, where one is set."""
    nbgrader_imported()
    api = nbgrader_api()
    Gradebook, MissingEntry = api.Gradebook, api.MissingEntry

    notebook = Path(assignment.notebook).stem
    found = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(db_url) as gb:
            for student in sorted(students):
                for ex in assignment.exercises:
                    if ex.kind != "manual":
                        continue
                    try:
                        grade = gb.find_grade(ex.id, notebook, assignment.id, student)
                    except MissingEntry:
                        continue
                    if grade.manual_score is not None:
                        found[(student, ex.id)] = float(grade.manual_score)
    return found
