"""The table every assignment's check tests share: each check passes on a solution written as a student
would, and fails (with the words its message must contain, and a hint) on a wrong implementation. A table
covers the exercises whose checks its WRONG names, each with all of its checks.

A test module makes one ``CheckTable`` and binds its tests by name, so pytest collects them there:

    TABLE = CheckTable(ATTENTION, SOLUTION, WRONG)
    test_every_check_has_a_wrong_implementation = TABLE.test_every_check_has_a_wrong_implementation
    test_check_passes_on_a_correct_solution = TABLE.test_check_passes_on_a_correct_solution
    test_check_fails_on_a_wrong_implementation = TABLE.test_check_fails_on_a_wrong_implementation
"""

from __future__ import annotations

import functools

import pytest

from grader.judge import judge_exercise
from grader.sandbox.inprocess import InProcess


class CheckTable:
    def __init__(self, assignment, solution: str, wrong: dict):
        self.assignment, self.solution, self.wrong = assignment, solution, wrong
        # The exercises the table covers (one of whose checks WRONG names), each whole; the corpus gives every
        # check of the course a wrong version anyway (tests/test_courses.py), so a new exercise may rely on it.
        covered = {e.id for e in assignment.exercises for c in e.checks if c.name in wrong}
        self.checks = {c.name: (e.id, c) for e in assignment.exercises if e.id in covered for c in e.checks}
        table = self

        def test_every_check_has_a_wrong_implementation():
            assert set(table.wrong) == set(table.checks)

        @pytest.mark.parametrize("name", sorted(self.checks))
        def test_check_passes_on_a_correct_solution(name):
            exercise_id, check = table.checks[name]
            result = table.solution_results()[exercise_id][name]
            assert result.status == "passed", result.message
            assert result.points == check.points

        @pytest.mark.parametrize("name", sorted(self.wrong))
        def test_check_fails_on_a_wrong_implementation(name):
            exercise_id, check = table.checks[name]
            source, words = table.wrong[name]
            result = table.judged(table.student(source), exercise_id)[name]
            assert result.status in ("failed", "error"), f"{name} accepted a wrong implementation"
            assert result.points == 0
            for word in words:
                assert word in result.message, result.message
            if check.hint or result.kind != "values":
                assert "Hint: " in result.message, result.message

        self.test_every_check_has_a_wrong_implementation = test_every_check_has_a_wrong_implementation
        self.test_check_passes_on_a_correct_solution = test_check_passes_on_a_correct_solution
        self.test_check_fails_on_a_wrong_implementation = test_check_fails_on_a_wrong_implementation

    def student(self, *sources: str):
        """The solution, then ``sources`` (later definitions replace earlier ones), run in-process."""
        cells = [(i, s) for i, s in enumerate((self.solution, *sources))]
        student, reports = InProcess.from_cells(cells, self.assignment.modules)
        assert all(r["status"] == "ok" for r in reports), reports
        return student

    def judged(self, student, exercise_id: str) -> dict:
        """{check name: CheckResult} for one exercise, judged as in a real grade."""
        return {r.name: r for r in judge_exercise(self.assignment.exercise(exercise_id), student).checks}

    @functools.cache
    def solution_results(self) -> dict:
        student = self.student()
        return {exercise_id: self.judged(student, exercise_id) for exercise_id in {e for e, _ in self.checks.values()}}
