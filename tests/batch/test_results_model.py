"""NotebookResult's JSON keeps flags and staff marks through to_dict/from_dict, and rejects unknown flags."""

import json

import pytest

from grader.results import CheckResult, ExerciseResult, NotebookResult, StaffMark


def _result(**kw):
    checks = (
        CheckResult(
            "check_a",
            "failed",
            0.0,
            1.5,
            "wrong values",
            kind="values",
            staff=StaffMark("override", 1.0, reason="typo in the prompt", by="ta1", grader_points=0.0),
        ),
        CheckResult("check_b", "passed", 0.5, 0.5),
    )
    manual = (
        CheckResult(
            "manual_review",
            "manual",
            0.0,
            2.0,
            "graded by course staff",
            staff=StaffMark("manual", 1.5, reason="clear", by="ta2"),
        ),
    )
    return NotebookResult(
        "sequence_models",
        "a.ipynb",
        "graded",
        exercises=(ExerciseResult("seq2col", checks, 2.0), ExerciseResult("q", manual, 2.0, manual=True)),
        max_score=4.0,
        **kw,
    )


def test_flags_and_staff_marks_round_trip_through_json():
    result = _result(flags=("late", "release_identical"))
    assert result.flags == ("release_identical", "late")  # one order, whatever order they were given in
    data = json.loads(result.to_json())
    assert data["version"] == 4 and data["flags"] == ["release_identical", "late"]
    back = NotebookResult.from_dict(data)
    assert back == result and back.to_json() == result.to_json()
    assert back.score == 1.0 + 0.5 + 1.5 and back.pending_points == 0


def test_a_result_without_flags_reads_as_none():
    data = _result().to_dict()
    del data["flags"]  # written before flags existed
    assert NotebookResult.from_dict(data).flags == ()


def test_an_unknown_flag_is_refused():
    with pytest.raises(ValueError, match="unknown notebook flag"):
        _result(flags=("plagiarised",))
