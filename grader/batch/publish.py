"""Write every output of a batch from its results, its record and the staff marks: results/*.json,
feedback pages, grades.csv, the summary, Gradescope files, the LMS import CSV and the gradebook.

A batch calls ``publish`` once all notebooks are graded; ``republish`` does the same later from what
OUTDIR holds (after a TA imports manual scores or sets an override), without any notebook at hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from grader.assignments.registry import Assignment, get_outline
from grader.results import NotebookResult

from . import outputs
from .lms import lms_path, write_lms_csv
from .record import LMS_FORMATS, BatchRecord, missing_result, no_notebook_reason, read_record
from .staff import bind_unbound, load_marks, save_marks, staff_lock
from .totals import final_result


def publish(
    outdir: Path,
    assignment: Assignment,
    record: BatchRecord,
    graded: dict[str, NotebookResult],
    keys: dict[str, str],
    phase: Callable[[str], None] = lambda text: None,
    similarity_written: Callable[[], None] = lambda: None,
    written: outputs.Written | None = None,
) -> tuple[dict[str, NotebookResult], list[str]]:
    """Apply the record's flags and the stored staff marks to ``graded`` and write every output.
    Returns the final results and notes for the TA (overrides the grader now disagrees with, marks
    that name an unknown student or check, manual points still pending). ``similarity_written``: returns
    once the similarity report is written (the summary, written last, shows its clusters). ``written``: what
    the batch wrote of each student while it graded (grader.batch.outputs.Written), not written again."""
    with staff_lock(outdir):
        return _publish(outdir, assignment, record, graded, keys, phase, similarity_written, written)


def _publish(
    outdir: Path,
    assignment: Assignment,
    record: BatchRecord,
    graded: dict[str, NotebookResult],
    keys: dict[str, str],
    phase: Callable[[str], None],
    similarity_written: Callable[[], None],
    written: outputs.Written | None,
) -> tuple[dict[str, NotebookResult], list[str]]:
    marks = load_marks(outdir)
    present = {s: who for s, who in record.students.items() if s in graded}
    bound = bind_unbound(
        marks, {s: who.answers for s, who in present.items()}, keys, {s: who.code_sha256 for s, who in present.items()}
    )
    if bound != marks:  # marks from a version 1 staff.json: from now on bound to what they were applied to
        save_marks(outdir, assignment.id, bound)
    notes, said, set_aside = [], {}, {}
    final = {}
    policy = record.policy()
    for student in sorted(graded):
        done = final_result(
            student, graded[student], record.students.get(student), bound, keys.get(student, ""), policy
        )
        final[student], said[student], set_aside[student] = done.result, done.notes, dict(done.set_aside)
        notes += [f"{student} {note}" for note in done.notes]
    for target in sorted({t.student for t in bound} - set(final)):
        notes.append(f"{target}: staff marks are stored for this student, who is not in this batch")
    phase(f"writing results, feedback pages, grades.csv and the summary to {outdir}")
    for student, result in final.items():
        # the JSON without the late charge; neither it nor the page made again when the batch wrote them as graded
        outputs.write_result(outdir, student, result, keys.get(student, ""), written=written)
        if record.gradescope:
            outputs.write_gradescope(outdir, student, result)
    outputs.write_grades_csv(outdir, assignment, final, record.students, said)
    # the LMS asked for, and every other LMS file the folder holds: none is left behind with earlier totals
    lms_files = sorted({record.lms} - {""} | {lms for lms in LMS_FORMATS if lms_path(outdir, lms).is_file()})
    for lms in lms_files:
        write_lms_csv(outdir, lms, assignment.id, final, record.students)
    if lms_files:
        waiting = sum(1 for r in final.values() if r.pending_points)
        if waiting:
            notes.append(
                f"{waiting} student{' has' if waiting == 1 else 's have'} manual points pending; "
                f"the {' and '.join(lms_files)} CSV gives {'that score' if waiting == 1 else 'their scores'} "
                f"without them"
            )
    phase(f"writing the nbgrader gradebook ({len(final)} students)")
    outputs.write_gradebook(record.gradebook_url(outdir), assignment, final, set_aside)
    similarity_written()
    outputs.write_summary(outdir, assignment, final, list(record.skipped))
    return final, notes


def republish(
    outdir: str | Path, phase: Callable[[str], None] = lambda text: None
) -> tuple[dict[str, NotebookResult], list[str]]:
    """Rewrite every output of the batch in ``outdir`` from its stored results (no grading)."""
    outdir = Path(outdir)
    record = read_record(outdir)
    assignment = get_outline(record.assignment)
    graded, keys = {}, {}
    for student, who in record.students.items():
        stored = outputs.read_result(outdir, student)
        if stored is not None and not who.no_notebook:
            graded[student], keys[student] = stored
        else:
            reason = (
                no_notebook_reason(who.no_notebook)
                if who.no_notebook
                else "seqgrade could not grade this notebook; run the batch again"
            )
            graded[student] = missing_result(assignment, who.notebook, reason)
    return publish(outdir, assignment, record, graded, keys, phase)
