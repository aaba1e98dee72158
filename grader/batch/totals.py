"""A student's final result, the one thing every output of a batch totals.

``final_result`` takes the grader's result and gives what counts: the batch record's flags (late,
unmodified release), the staff marks that still hold and the late policy's charge. Its ``score`` is the
student's total everywhere: the progress line, the terminal table, grades.csv, the LMS files, the feedback
page, Gradescope's results.json, the gradebook and the summary page (``score_text`` is how the lines and
tables write it). A flag changes no points; a mark replaces its check's points; a late charge scales the
notebook's points, staff marks included (``grader.batch.late``: a TA who waives lateness gives an
extension, an override is about a check). When the policy judged a submission's time, the LMS's own late
flag is dropped: the charge says what the policy made of it.

A manual score is set aside when the student's answer differs from the one it scored: the question's
points are pending again and the TA is told (``manual stale``). An answer cell left exactly as released, or
emptied, is unanswered: 0 points, not pending (a staff score still counts). An override is set aside when the
notebook's code differs from the code it was made on: the grader's points stand, the override is kept in
staff.json and listed, and the TA is told (``override stale``) until they confirm it
(``seqgrade override ... --confirm``). On the same code an override applies; when the grader's points for
its check changed since (another seqgrade version or limits), the TA is told.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from grader.results import MANUAL_MESSAGE, UNANSWERED_KIND, NotebookResult

from .late import LatePolicy, assess
from .staff import StoredMark, Target

NO_ANSWER = "no answer to grade: the submission has no readable notebook of this assignment"
UNANSWERED = (
    "unanswered: the answer cell is empty or still reads exactly as it was released, so there was nothing "
    "for course staff to grade (0 points)"
)
OVERRIDE_STALE = "override stale"


@dataclass(frozen=True)
class Final:
    result: NotebookResult  # the grader's result with the flags and the staff marks that hold
    notes: tuple[str, ...] = ()  # for the TA, each naming the check (not the student)
    set_aside: tuple[tuple[str, float], ...] = ()  # (manual question, points) of scores made on another answer


def score_text(result: NotebookResult) -> str:
    """A total as the progress lines and the terminal table write it."""
    return f"{result.score:g}/{result.max_score:g}"


def final_result(
    student: str,
    graded: NotebookResult,
    who,
    marks: dict[Target, StoredMark],
    key: str = "",
    policy: LatePolicy | None = None,
) -> Final:
    """``graded`` with the flags of ``who`` (the student's batch record; None when not known, then no
    answer is compared), exactly the stored marks of ``student`` that hold (marks already on the result
    are replaced) and the charge of the late ``policy`` (None: no policy). ``key`` is the cache key of the
    graded result ("" when none)."""
    notes, set_aside = [], []
    mine = {(t.exercise, t.check): m for t, m in marks.items() if t.student == student}
    answers = who.answers if who is not None else None
    # a notebook that could not be read (or is another assignment's, or a PDF) has no answer to wait for
    unanswerable = graded.status != "graded" and answers is not None and not any(a.strip() for a in answers.values())
    used = set()
    exercises = []
    for e in graded.exercises:
        checks = []
        for c in e.checks:
            stored = mine.get((e.id, c.name))
            mark = None
            if stored is not None:
                used.add((e.id, c.name))
                m = stored.mark
                if answers is not None and stored.answer_changed(answers.get(e.id, "")):
                    set_aside.append((e.id, m.points))
                    notes.append(
                        f"manual stale: {e.id} (the answer changed since it was scored {m.points:g}/{c.max_points:g}"
                        + (f" by {m.by}" if m.by else "")
                        + "; its points are pending again)"
                    )
                elif who is not None and stored.code_changed(getattr(who, "code_sha256", ""), key):
                    notes.append(
                        f"{OVERRIDE_STALE}: {e.id}.{c.name} (set to {m.points:g}/{c.max_points:g}"
                        + (f" by {m.by}" if m.by else "")
                        + f" on other code: the notebook changed since; the "
                        f"grader's {c.points:g} stand until staff confirm it with `seqgrade override OUTDIR "
                        f"{student} {e.id}.{c.name} --confirm`)"
                    )
                else:
                    mark = replace(m, grader_points=c.points)
                    notes += _override_notes(e.id, c.name, c.points, stored)
            if mark is not None and c.kind == UNANSWERED_KIND:  # scored by staff after all (a stored result held it
                c = replace(
                    c, status="manual", message=MANUAL_MESSAGE, kind=""
                )  # as unanswered): a written answer again
            if c.status == "manual" and mark is None:
                if unanswerable:
                    c = replace(c, status="missing", message=NO_ANSWER, kind="missing")
                elif e.id in getattr(who, "unanswered", ()):
                    c = replace(c, status="missing", message=UNANSWERED, kind=UNANSWERED_KIND)
            checks.append(replace(c, staff=mark))
        exercises.append(replace(e, checks=tuple(checks)))
    for exercise_id, check in sorted(set(mine) - used):
        notes.append(
            f"{exercise_id}.{check}: the {mine[(exercise_id, check)].mark.kind} mark is not applied "
            f"(this result has no such check: status {graded.status})"
        )
    late = assess(policy, student, who)
    flags = tuple(f for f in (who.flags if who is not None else ()) if not (late.decided and f == "late"))
    chosen = getattr(who, "chosen", "") if who is not None else graded.chosen
    result = replace(graded, exercises=tuple(exercises), flags=flags, late=late.charge, chosen=chosen)
    return Final(result, tuple(notes) + late.notes, tuple(set_aside))


def _override_notes(exercise: str, check: str, points: float, stored: StoredMark) -> list[str]:
    """What the TA should know about an override that applies (on the code it was made on): the grader's
    points for the check changed (another seqgrade version or limits)."""
    mark = stored.mark
    if mark.kind != "override" or mark.grader_points == points:
        return []
    return [
        f"{exercise}.{check}: the grader now gives {points:g} points (it gave {mark.grader_points:g} when the "
        f"override was set); the override of {mark.points:g} is kept"
    ]
