"""Who a TA means: a student named by id, or by the name or email the LMS export gave.

Staff commands and files (``seqgrade override``, ``manual import``, the late policy's extensions) take a
student as the TA types it. An id of the batch is taken exactly as it is; any other text is compared with
each student's LMS name and email, ignoring case and surrounding spaces. Text that matches nobody, or
several students, is an error that lists the candidates: a mark never lands on a guess.
"""

from __future__ import annotations

from grader.errors import StudentNotFound


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def describe(student: str, who) -> str:
    """``student`` with the LMS's name and email where known, as errors list candidates."""
    known = [x for x in (getattr(who, "name", ""), getattr(who, "email", "")) if x]
    return f"{student!r} ({', '.join(known)})" if known else repr(student)


def resolve_student(students: dict, text: str) -> str:
    """The id of the one student of ``students`` (id -> batch record) that ``text`` names; StudentNotFound
    when none or several do."""
    if text in students:
        return text
    key = _key(text)
    matches = sorted(s for s, who in students.items() if key and key in (_key(who.name), _key(who.email)))
    if len(matches) == 1:
        return matches[0]
    if matches:
        listed = ", ".join(describe(s, students[s]) for s in matches)
        raise StudentNotFound(f"{text!r} names {len(matches)} students: {listed}; give the student id", tuple(matches))
    known = ", ".join(describe(s, students[s]) for s in sorted(students)[:10])
    raise StudentNotFound(f"unknown student {text!r}: no id, name or email of this batch; students include: {known}")
