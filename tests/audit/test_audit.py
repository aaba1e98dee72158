"""seqgrade audit (issue 29): the mutants it makes, the two acceptance tests (a check removed leaves
survivors; a check charging another exercise's function is reported as a double charge), the triage file,
and, for every assignment, a fixed sample of its mutants audited against the floors of its triage file.

Everything is graded in-process here (the audit's ``inprocess`` backend, in this process): the sample's
mutants neither hang nor allocate much, and what is compared is points, not time."""

from __future__ import annotations

import ast
import json
from dataclasses import replace

import pytest

from grader.assignments.registry import ASSIGNMENTS, get_assignment
from grader.audit import triage
from grader.audit.model import AuditError
from grader.audit.mutants import SolutionCell, cell_mutants, without_markers
from grader.audit.operators import OPERATORS
from grader.audit.run import AuditOptions, audit, mutants_of, selfchecked
from grader.checking.base import CheckFailed, call
from grader.checking.exercise import Check
from grader.cli import main
from reference import recursive as ref

HERE = AuditOptions(backend="inprocess", workers=0, leaks=False)


@pytest.fixture(scope="module")
def every_mutant():
    return {a: mutants_of(get_assignment(a)) for a in ASSIGNMENTS}


def test_each_mutant_changes_the_student_lines_once_and_compiles(every_mutant):
    for assignment, mutants in every_mutant.items():
        assert mutants, assignment
        assert len({m.id for m in mutants}) == len(mutants), assignment
        assert len({m.source for m in mutants}) == len(mutants), assignment
        for m in mutants:
            compile(m.source, m.id, "exec")
            assert m.before and m.after and m.before != m.after, m.id
            assert "### BEGIN SOLUTION" not in m.source and not m.before.startswith(("def ", '"""')), m.id


def test_every_operator_finds_its_mistake_somewhere_in_the_course(every_mutant):
    made = {m.operator for mutants in every_mutant.values() for m in mutants}
    assert made == set(OPERATORS)
    diffs = {m.operator: [] for mutants in every_mutant.values() for m in mutants}
    for mutants in every_mutant.values():
        for m in mutants:
            diffs[m.operator].append(m.diff)
    wanted = {
        "axis": "dim=-2",
        "sqrt": "/ q.shape[-1]",
        "infinity": "-1e9",
        "dtype": "torch.float32",
        "keepdim": "keepdim=True",
        "function": "torch.tril(",
        "reset": "if q0 == 0 else m",
        "range": "- block_size",
        "transpose": "q @ K /",
        "arithmetic": "M / (4 * d)",
        "comparison": "cols >= rows",
    }
    for operator, text in wanted.items():
        assert any(text in d.split("  ->  ")[1] for d in diffs[operator]), (operator, text)


def test_mutant_ids_do_not_move_when_another_line_changes():
    text = "def f(x, y):\n    ### BEGIN SOLUTION\n    a = x + 1\n    return a * y\n    ### END SOLUTION\n"
    edited = text.replace("    a = x + 1\n", "    a = x + 1  # one more\n    b = 2\n")
    first = {m.diff: m.id for m in cell_mutants(SolutionCell("f", text, ((3, 4),)))}
    second = {m.diff: m.id for m in cell_mutants(SolutionCell("f", edited, ((3, 5),)))}
    assert first["return a * y  ->  return a / y"] == second["return a * y  ->  return a / y"]
    assert without_markers(text) == "def f(x, y):\n    a = x + 1\n    return a * y\n"
    assert all("def f" not in d for d in first)


def _of(assignment: str, exercise: str, operator: str, after: str) -> tuple[str, ...]:
    return tuple(
        m.id
        for m in mutants_of(get_assignment(assignment))
        if m.exercise == exercise and m.operator == operator and after in m.after
    )


def _without(assignment, exercise: str, check: str):
    exercises = tuple(
        replace(e, checks=tuple(c for c in e.checks if c.name != check)) if e.id == exercise else e
        for e in assignment.exercises
    )
    return replace(assignment, exercises=exercises)


def test_removing_a_check_leaves_survivors_the_audit_reports():
    """Acceptance: without the check that attention_io raises for M < 4d, skipping that test survives."""
    assignment = get_assignment("recursive_attention")
    skipped = _of("recursive_attention", "attention_io", "branch", "if False")
    assert skipped
    options = replace(HERE, only=skipped)
    assert all(m.killed for m in audit(assignment, options).mutants)
    weaker = _without(assignment, "attention_io", "check_attention_io_rejects_small_memory")
    report = audit(weaker, options)
    assert [m.id for m in report.unexplained] == list(skipped)
    assert report.unexplained[0].passed_checks == ("check_attention_io_counts",)
    assert any("unexplained survivor" in line for line in report.below_floors)


def check_io_counts_from_another_exercise(student):
    """attention_io(64, 8, 1000) gives the notebook's counts (checked, wrongly, inside tiled_attention).

    Always judged."""
    own = getattr(student, "student", student)  # the student's own function, not the grader's stand-in
    got = call(own, "attention_io", 64, 8, 1000).value
    if tuple(got) != ref.attention_io(64, 8, 1000):
        raise CheckFailed(f"attention_io(64, 8, 1000) = {got}; expected {ref.attention_io(64, 8, 1000)}")


def test_a_check_that_charges_another_exercise_is_reported_as_a_double_charge():
    """Acceptance: a check of tiled_attention that calls the student's own attention_io makes a mistake in
    attention_io cost points in tiled_attention too, and the audit names it."""
    assignment = get_assignment("recursive_attention")
    floor_for_ceil = _of("recursive_attention", "attention_io", "function", "math.floor(N / block)")
    assert floor_for_ceil
    exercises = tuple(
        replace(e, checks=e.checks + (Check(check_io_counts_from_another_exercise, 0.5),))
        if e.id == "tiled_attention"
        else e
        for e in assignment.exercises
    )
    report = audit(replace(assignment, exercises=exercises), replace(HERE, only=floor_for_ceil))
    (charged,) = report.double_charges
    assert charged.killed and charged.double_charged == ("tiled_attention",) and charged.lost["tiled_attention"] == 0.5
    assert any("double charge" in line for line in report.below_floors)


def test_accepting_a_survivor_is_recorded_and_explains_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(triage, "ASSIGNMENTS_ROOT", tmp_path)
    mutant = _of("recursive_attention", "merge", "constant", "total > 1")[0]
    assert (
        main(
            [
                "audit",
                "recursive_attention",
                "--accept",
                mutant,
                "--reason",
                "total >= 1 unless both are empty",
                "--by",
                "ta",
            ]
        )
        == 0
    )
    data = json.loads((tmp_path / "audit" / "recursive_attention.json").read_text())
    assert data["version"] == triage.TRIAGE_SCHEMA_VERSION and data["accepted"][0]["mutant"] == mutant
    assert "total > 1" in data["accepted"][0]["diff"] and data["accepted"][0]["by"] == "ta"
    report = audit("recursive_attention", replace(HERE, only=(mutant,)))
    (outcome,) = report.mutants
    assert outcome.survived and outcome.equivalent and outcome.accepted.reason.startswith("total >= 1")
    assert not report.unexplained and not report.below_floors
    assert main(["audit", "recursive_attention", "--accept", mutant + "x", "--reason", "typo"]) == 1
    assert "did you mean" in capsys.readouterr().err
    assert main(["audit", "recursive_attention", "--accept", mutant]) == 1  # no reason
    assert main(["audit", "recursive_attention", "--reason", "why"]) == 2


def test_json_from_the_command_line_in_a_worker_pool(capsys):
    mutant = _of("recursive_attention", "attention_io", "arithmetic", "M / (4 * d)")
    code = main(["audit", "recursive_attention", "--only", mutant[0], "--inprocess", "--workers", "1", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 4) and data["version"] == 1 and data["sampled"]
    (m,) = data["mutants"]
    assert m["killed"] and m["selfcheck"]["status"] == "failed" and m["selfcheck"]["cell"] == "selfcheck_attention_io"


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_a_fixed_sample_of_each_assignment_holds_its_floors(assignment):
    """CI's audit: one mutant per exercise (the same ones every run), the floors of the triage file, and no
    self-check on a case the grader checks."""
    report = audit(assignment, AuditOptions(backend="inprocess", workers=0, sample=1))
    assert report.mutants and not report.below_floors, report.below_floors
    assert not report.leaks


def test_self_checks_never_look_at_an_answer():
    for assignment in ASSIGNMENTS.values():
        answers = {e.id for e in assignment.exercises if e.kind == "answer"}
        source = (triage.ASSIGNMENTS_ROOT / "source" / assignment.id / "selfcheck.py").read_text()
        names = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
        assert not answers & names and not any(a in source for a in answers), assignment.id
        assert not answers & selfchecked(assignment), assignment.id  # no self-check cell is handed an answer


def test_a_triage_file_of_another_version_is_refused(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"version": 99, "assignment": "attention"}))
    with pytest.raises(AuditError, match="version 99"):
        triage.read_triage("attention", path)
