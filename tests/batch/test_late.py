"""The late policy's rules: penalties, credit windows, extensions, what Canvas's flag and an unreadable time
mean, and where a policy comes from. Pure functions, no grading; the policy in a batch:
tests/batch/test_late_batches.py."""

import datetime as dt
import json

import pytest

from grader.batch.late import (
    ARCHIVE_TIME,
    assess,
    batch_policy,
    course_policy,
    credit_percent,
    policy_from_dict,
    read_extensions,
)
from grader.batch.record import StudentRecord
from grader.errors import UsageError

from .late_policies import DUE, PER_DAY, WINDOWED, _policy


def _who(submitted, source="Gradescope created_at", late=False, **kw) -> StudentRecord:
    return StudentRecord("nb.ipynb", submitted=submitted, submitted_from=source, late=late, **kw)


def test_per_day_percentage_with_grace_and_a_floor():
    policy = _policy(PER_DAY)
    on_time = [DUE, "2025-10-21T00:14:00+02:00", "2025-10-20T22:13:59+00:00"]  # grace; and 00:13:59 in Berlin
    assert [assess(policy, "s", _who(t)).charge for t in on_time] == [None] * 3
    day = dt.timedelta(days=1)
    assert [
        credit_percent(policy, d)
        for d in (dt.timedelta(minutes=16), day, day + dt.timedelta(seconds=1), 4.5 * day, 30 * day)
    ] == [90, 90, 80, 50, 50]
    charge = assess(policy, "s", _who("2025-10-22T10:00:00+02:00")).charge
    assert charge.credit == pytest.approx(0.8)
    assert charge.reason == (
        "late by 1 day 10 hours (submitted 2025-10-22 10:00 +0200, Gradescope created_at; "
        "due 2025-10-20 23:59 +0200): 80% credit"
    )


def test_credit_windows_in_the_course_time_zone():
    policy = _policy(WINDOWED)  # due 23:59 in Berlin: 21:59 UTC in October
    credit = {
        "2025-10-20T21:59:00+00:00": None,
        "2025-10-21T21:58:00+00:00": 0.8,
        "2025-10-21T22:00:00+00:00": 0.5,
        "2025-10-23T21:59:00+00:00": 0.5,
        "2025-10-23T22:00:00+00:00": 0.0,
    }
    assert {t: getattr(assess(policy, "s", _who(t)).charge, "credit", None) for t in credit} == credit


def test_an_extension_moves_the_due_time_and_is_said():
    policy = _policy({**PER_DAY, "extensions": {"s": {"due": "2025-10-23", "reason": "medical"}}})
    kept = assess(policy, "s", _who("2025-10-23T20:00:00+02:00"))
    assert kept.charge is None and kept.notes == (
        "on time by its extension (extended to 2025-10-23 23:59 +0200: medical)",
    )
    late = assess(policy, "s", _who("2025-10-24T12:00:00+02:00")).charge
    assert late.credit == pytest.approx(0.9) and "extended to 2025-10-23 23:59 +0200: medical" in late.reason
    assert assess(policy, "other", _who("2025-10-23T20:00:00+02:00")).charge.credit == pytest.approx(0.7)


def test_canvas_file_times_have_no_zone_and_the_lms_flag_is_checked():
    policy = _policy({**PER_DAY, "archive_timezone": "UTC"})
    on_time = assess(policy, "s", _who("2025-10-20T21:00:00", ARCHIVE_TIME, late=True))  # 23:00 in +02:00
    assert on_time.charge is None and on_time.decided
    assert (
        "the LMS marked it late, but its time 2025-10-20 23:00 +0200 (Canvas file time) is on time" in on_time.notes[0]
    )
    # without archive_timezone or timezone, a file time is read at the due time's offset
    assert assess(_policy(PER_DAY), "s", _who("2025-10-20T23:59:30", ARCHIVE_TIME)).charge is None
    assert assess(_policy(PER_DAY), "s", _who("2025-10-21T00:15:30", ARCHIVE_TIME)).charge.credit == pytest.approx(0.9)
    unknown = assess(policy, "s", _who("", "", late=True))
    assert unknown.charge is None and not unknown.decided and "no submission time" in unknown.notes[0]


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"due": "next friday"}, "is not a time"),
        ({"timezone": "Mars/Olympus"}, "unknown time zone"),
        ({"penalty": {"per_day": 120}}, "percentage in [0, 100]"),
        ({"penalty": {"windows": [{"hours": 48, "credit": 50}, {"hours": 24, "credit": 80}]}}, "increasing hours"),
        ({"penalty": {"percent": 10}}, '"penalty" is'),
        ({"deadline": DUE}, "unknown key(s) deadline"),
        ({"version": 2}, '"version": 1'),
    ],
)
def test_a_policy_that_cannot_be_applied_says_why(change, problem):
    with pytest.raises(
        UsageError, match=problem.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")
    ):
        policy_from_dict({**PER_DAY, **change})


def test_extensions_name_students_by_id_name_or_email(tmp_path):
    people = {
        "1001": StudentRecord("a", name="hopper", email="grace@uni.edu"),
        "1002": StudentRecord("b", name="hopper", email="gh@uni.edu"),
        "1003": StudentRecord("c", name="lovelace", email="ada@uni.edu"),
    }
    table = tmp_path / "ext.csv"
    table.write_text(
        "student,due,reason\n1001,2025-10-22T12:00+02:00,flu\nADA@uni.edu,2025-10-25,conference\nnobody,2025-10-25,\n"
    )
    policy, notes = read_extensions(table, _policy(PER_DAY), people)
    assert {s: (e.due, e.reason) for s, e in policy.extensions.items()} == {
        "1001": ("2025-10-22T12:00+02:00", "flu"),
        "1003": ("2025-10-25", "conference"),
    }
    assert notes == ["ext.csv, row 4: no student 'nobody' in this batch; the extension is not used"]
    table.write_text("student,due,reason\nhopper,2025-10-22,flu\n")
    with pytest.raises(
        UsageError,
        match=r"ext.csv, row 2: 'hopper' names 2 students: '1001' \(hopper, grace@uni.edu\), "
        r"'1002' \(hopper, gh@uni.edu\); give the student id",
    ):
        read_extensions(table, _policy(PER_DAY), people)


def test_the_course_config_and_a_policy_file(tmp_path):
    (tmp_path / "course.json").write_text(
        json.dumps(
            {"version": 1, "assignments": {"sequence_models": {"late_policy": {**PER_DAY, "extensions": "ext.csv"}}}}
        )
    )
    policy, extensions = course_policy("sequence_models", tmp_path)
    assert policy.per_day == 10 and extensions == tmp_path / "ext.csv"
    assert course_policy("attention", tmp_path) is None and course_policy("attention", tmp_path / "none") is None
    assert batch_policy(None, None, "attention", {}) == (None, [])  # the course ships no policy
    with pytest.raises(UsageError, match="--extensions needs a late policy"):
        batch_policy(None, str(tmp_path / "ext.csv"), "attention", {})


# ---- issue 37: dates that mean what the TA wrote, reasons that are true, one number on every line ----------


def test_a_date_only_due_date_covers_the_whole_day():
    policy = _policy({**PER_DAY, "due": "2025-10-20", "timezone": "UTC", "grace_minutes": 0})
    assert assess(policy, "s", _who("2025-10-20T23:59:59.500000+00:00")).charge is None  # was 90%: due at 23:59:59.000
    assert assess(policy, "s", _who("2025-10-21T00:00:00+00:00")).charge.credit == pytest.approx(0.9)


def test_an_extension_that_explains_the_late_flag_is_the_only_reason():
    policy = _policy(
        {**PER_DAY, "archive_timezone": "UTC", "extensions": {"s": {"due": "2025-10-23", "reason": "medical"}}}
    )
    kept = assess(
        policy, "s", _who("2025-10-22T08:00:00", ARCHIVE_TIME, late=True)
    )  # Canvas: LATE; inside the extension
    assert kept.charge is None and kept.decided
    assert kept.notes == ("on time by its extension (extended to 2025-10-23 23:59 +0200: medical)",)


def test_an_unreadable_submission_time_is_never_on_time_by_default():
    said = assess(_policy(PER_DAY), "s", _who("2025-10-23 10:00:00 PDT"))
    assert said.charge is None and not said.decided  # not judged: the LMS's own flag is kept
    assert said.notes == (
        "submission time unreadable: '2025-10-23 10:00:00 PDT' (Gradescope created_at) is not a time "
        "the late policy can read, so it was not applied; give the student an extension row to decide",
    )
