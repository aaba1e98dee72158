"""Every exercise the course declares is complete: the declaration is the only place an exercise is named
(grader.checking.exercise.Exercise), so nothing else can make up for what it lacks.

For every declared exercise of every assignment: a function or class has a reference, whose parameters are
those of the stub the released notebook defines (they name the arguments in failure messages); a function is
served to the assignment's other exercises (its reference as a stand-in) with a cost model, and one that
another exercise requires has a stand-in; every assignment has wrong and hostile sample cells for the demo,
each replacing a cell the notebook has; and every self-check passes on the declared reference (the self-check
is the reference's oracle test too). The tests at the end show each rule failing on a declaration that lacks
the item.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import inspect
import io
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

from grader.assignments.registry import ASSIGNMENTS, get_assignment
from grader.checking.exercise import Assignment, Exercise
from grader.checking.standins import for_exercise
from grader.course.release import release
from grader.course.samples import SampleCells, sample_cells
from grader.notebook import grade_id as _grade_id

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def released_cells(assignment: str) -> dict[str, str]:
    """{grade id: source} of the student version of ``assignment``'s notebook, as released."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = release(assignment, Path(tmp))
        nb = nbformat.read(folder / get_assignment(assignment).notebook, as_version=4)
    return {_grade_id(c): c.source for c in nb.cells if _grade_id(c)}


def _parameters(node) -> tuple[str, ...]:
    args = node.args
    return tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))


def stub_parameters(source: str, name: str) -> dict[str, tuple[str, ...]] | None:
    """What the stub ``name`` in a cell takes: {"": the function's or constructor's parameters, and for a
    class "forward": forward's}, without ``self``; None when the cell defines no such name."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    for node in ast.parse(code).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return {"": _parameters(node)}
        if isinstance(node, ast.ClassDef) and node.name == name:
            methods = {m.name: _parameters(m)[1:] for m in node.body if isinstance(m, ast.FunctionDef)}
            return {"": methods.get("__init__", ()), "forward": methods.get("forward", ())}
    return None


def _reference_parameters(exercise: Exercise) -> dict[str, tuple[str, ...]]:
    found = {"": exercise.argument_names}
    if exercise.kind == "class" and hasattr(exercise.reference, "forward"):
        found["forward"] = tuple(inspect.signature(exercise.reference.forward).parameters)[1:]
    return found


def problems(assignment: Assignment, cells: dict[str, str], samples: SampleCells) -> list[str]:
    """What the declarations of ``assignment`` lack, one sentence each; ``cells``: the released notebook's
    cells by grade id; ``samples``: the demo's sample cells."""
    found = []
    functions = [e.id for e in assignment.exercises if e.kind == "function"]
    required = {r for e in assignment.exercises for r in e.requires}
    for e in assignment.exercises:
        where = f"{assignment.id}.{e.id}"
        if e.kind not in ("function", "class"):
            continue
        if e.reference is None:
            found.append(f"{where} declares no reference")
        elif getattr(e.reference, "__name__", "") != e.id:
            found.append(f"{where} declares the reference {e.reference.__name__}, not one named {e.id}")
        else:
            stub = stub_parameters(cells.get(e.id, ""), e.id)
            if stub is None:
                found.append(f"{where}: the released notebook's cell {e.id!r} defines no {e.id}")
            elif stub != _reference_parameters(e):
                found.append(f"{where}: the notebook's stub takes {stub}, the reference {_reference_parameters(e)}")
        if e.kind == "function":
            if e.cost is None:
                found.append(f"{where} declares no cost model for its stand-in")
            other = next((o for o in assignment.exercises if o.kind == "function" and o.id != e.id), None)
            if other is not None and e.id not in for_exercise(None, other, functions).stand_ins:
                found.append(f"{where} is not served while {other.id} is graded")
        if e.id in required and e.required_stand_in is None:
            found.append(f"{where} is required by another exercise but has no stand-in")
    for kind, chosen in (("wrong", samples.wrong), ("hostile", samples.hostile)):
        if not chosen:
            found.append(f"{assignment.id} has no {kind} sample cells")
        for grade_id in sorted(set(chosen) - set(cells)):
            found.append(f"{assignment.id}: the {kind} sample cell {grade_id!r} replaces no cell of the notebook")
    declared = {e.id for e in assignment.exercises}
    for grade_id in sorted(set(samples.wrong) - declared):
        found.append(f"{assignment.id}: the wrong sample cell {grade_id!r} is no declared exercise")
    return found


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_every_declared_exercise_is_complete(assignment):
    declared = get_assignment(assignment)
    assert problems(declared, released_cells(assignment), sample_cells(assignment)) == []


def self_checks(assignment: str):
    """The assignment's selfcheck module, loaded from its source folder as the notebook loads it."""
    folder = ROOT / "assignments" / "source" / assignment
    spec = importlib.util.spec_from_file_location(f"selfcheck_of_{assignment}", folder / "selfcheck.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(folder))  # its shared helper, selfcheck_base.py, ships beside it
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    return module


def self_checks_on_references(module, assignment: Assignment) -> tuple[list[str], list[str]]:
    """Each self-check of ``module`` run on the declared references (a self-check takes the notebook's functions
    by name: selfcheck.check_forward(forward, recurrent_unit)): (the ones run, how each that failed failed)."""
    declared = {e.id: e for e in assignment.exercises}
    ran, failed = [], []
    for name, check in vars(module).items():
        params = list(inspect.signature(check).parameters) if name.startswith("check_") and callable(check) else []
        if not params or not all(p in declared and declared[p].reference is not None for p in params):
            continue
        ran.append(name)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            try:
                check(*(declared[p].reference for p in params))
            except Exception as exc:  # a self-check fails its cell with the smallest counterexample
                failed.append(f"{assignment.id}: {name} fails on the reference: {exc}")
                continue
        if "[ok]" not in out.getvalue():
            failed.append(f"{assignment.id}: {name} printed {out.getvalue()!r} on the reference")
    return ran, failed


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_every_self_check_passes_on_the_declared_reference(assignment):
    """A self-check tests the student's function against an independent oracle (torch's own module, a worked
    example, a law), so it tests the reference too: the two must agree."""
    ran, failed = self_checks_on_references(self_checks(assignment), get_assignment(assignment))
    assert ran and failed == []


# --- each rule fails on a declaration that lacks its item -----------------------------------------------------


def _without(assignment: Assignment, exercise_id: str, **changes) -> Assignment:
    return replace(
        assignment, exercises=tuple(replace(e, **changes) if e.id == exercise_id else e for e in assignment.exercises)
    )


def _problems(assignment: Assignment) -> list[str]:
    return problems(assignment, released_cells(assignment.id), sample_cells(assignment.id))


def test_an_exercise_without_a_reference_is_caught_and_is_no_longer_served():
    rnn_lm = get_assignment("rnn_lm")
    found = _problems(_without(rnn_lm, "causal_conv1d", reference=None))
    assert "rnn_lm.causal_conv1d declares no reference" in found
    assert "rnn_lm.causal_conv1d is not served while lstm_cell is graded" in found


def test_a_reference_whose_parameters_are_not_the_stubs_is_caught():
    def sample_next(logits, temperature, rng):
        raise AssertionError("never called")

    found = _problems(_without(get_assignment("lm_modules"), "sample_next", reference=sample_next))
    assert found == [
        "lm_modules.sample_next: the notebook's stub takes {'': ('logits', 'temperature', 'generator')}, "
        "the reference {'': ('logits', 'temperature', 'rng')}"
    ]


def test_a_class_whose_forward_is_not_the_stubs_is_caught():
    class RNNLayer:
        def __init__(self, input_dim, hidden_dim):
            pass

        def forward(self, x_seq):
            pass

    found = _problems(_without(get_assignment("lm_modules"), "RNNLayer", reference=RNNLayer))
    assert len(found) == 1 and "lm_modules.RNNLayer: the notebook's stub takes" in found[0]


def test_a_stand_in_without_a_cost_model_is_caught():
    found = _problems(_without(get_assignment("recursive_attention"), "merge", cost=None))
    assert found == ["recursive_attention.merge declares no cost model for its stand-in"]


def test_a_required_exercise_without_a_stand_in_is_refused_by_its_assignment():
    with pytest.raises(ValueError, match=r"forward requires \['recurrent_unit'\]"):
        _without(get_assignment("sequence_models"), "recurrent_unit", reference=None, stand_in=None)


def test_missing_or_stray_sample_cells_are_caught():
    assignment = get_assignment("attention")
    cells, samples = released_cells("attention"), sample_cells("attention")
    assert "attention has no hostile sample cells" in problems(assignment, cells, replace(samples, hostile={}))
    stray = replace(samples, wrong={**samples.wrong, "flash_attention": "def flash_attention(): pass"})
    assert problems(assignment, cells, stray) == [
        "attention: the wrong sample cell 'flash_attention' replaces no cell of the notebook",
        "attention: the wrong sample cell 'flash_attention' is no declared exercise",
    ]


def test_a_reference_its_self_check_refutes_is_caught():
    def receptive_field(kernel_size, dilations):
        return (kernel_size - 1) * sum(dilations)  # forgets the current input

    wrong = _without(get_assignment("rnn_lm"), "receptive_field", reference=receptive_field)
    ran, failed = self_checks_on_references(self_checks("rnn_lm"), wrong)
    assert "check_receptive_field" in ran and len(failed) == 1 and "check_receptive_field fails" in failed[0]
