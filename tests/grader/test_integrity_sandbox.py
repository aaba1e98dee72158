"""Integrity cases that need the real sandbox: hangs, cell timeouts, the course's helper module, and
student code that patches the grader's own modules in its process (harmless only when that process is
not the grader's). Notebooks are the released solution with some cells replaced."""

import json

import pytest

from grader.assignments.registry import SEQUENCE_MODELS
from grader.notebook import grade_id

from .test_checks import WRONG

FULL = {e.id: e.points for e in SEQUENCE_MODELS.exercises if e.kind != "manual"}


@pytest.fixture(scope="module")
def solution_nb(released):
    return json.loads(released[1].read_text())


def notebook(tmp_path, base: dict, name: str, replace: dict[str, str]):
    nb = json.loads(json.dumps(base))
    for cell in nb["cells"]:
        gid = grade_id(cell)
        if gid in replace:
            cell["source"] = replace[gid]
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps(nb))
    return path


def lost(result) -> dict:
    return {e.id: e.score for e in result.exercises if e.id in FULL and e.score != FULL[e.id]}


def test_the_solution_runs_every_cell_cleanly_including_the_helper_import(sandbox_grader, solution_nb, tmp_path):
    result = sandbox_grader.grade(notebook(tmp_path, solution_nb, "solution", {}), "sequence_models")
    assert [c for c in result.cells if c["status"] != "ok"] == []
    assert lost(result) == {}


def test_a_syntax_error_is_named_first_and_costs_only_its_exercise(sandbox_grader, solution_nb, tmp_path):
    path = notebook(
        tmp_path,
        solution_nb,
        "syntax",
        {
            "recurrent_unit": "def recurrent_unit(x, h_prev, Wrec, Win):\n"
            "    return torch.relu(h_prev @ Wrec.T + x @ Win.T\n"
        },
    )
    result = sandbox_grader.grade(path, "sequence_models")
    assert lost(result) == {"recurrent_unit": 0.0}
    root = result.exercise("recurrent_unit").root_cause
    assert root.startswith("its cell did not run") and "SyntaxError" in root, root


def test_a_hanging_mask_costs_only_causal_mask(sandbox_grader, solution_nb, tmp_path):
    path = notebook(
        tmp_path, solution_nb, "hang", {"causal_mask": "def causal_mask(T):\n    while True:\n        pass"}
    )
    result = sandbox_grader.grade(path, "sequence_models")
    assert lost(result) == {"causal_mask": 0.0}
    root = result.exercise("causal_mask").root_cause
    # The charge is the hang, with the hint for it; not "does no real work".
    assert root.startswith("ran out of time: causal_mask did not return"), root
    checks = result.exercise("causal_mask").checks
    assert {c.kind for c in checks} == {"timeout"} and all(c.status == "timeout" for c in checks)


def test_a_cell_stopped_by_the_cell_timeout_is_named(sandbox_grader, solution_nb, tmp_path):
    source = (
        "def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.relu(h_prev @ Wrec.T + x @ Win.T)\n"
        "import time\ntime.sleep(3600)"
    )
    result = sandbox_grader.grade(
        notebook(tmp_path, solution_nb, "slow", {"recurrent_unit": source}), "sequence_models"
    )
    assert lost(result) == {"recurrent_unit": 0.0}
    root = result.exercise("recurrent_unit").root_cause
    assert "ran too long" in root and "cell" in root, root


def test_patching_the_protocol_module_in_the_sandbox_earns_nothing(sandbox_grader, solution_nb, tmp_path):
    patch = """import numpy as np
import torch
import sys
for _name, _module in list(sys.modules.items()):
    if _name.startswith('grader.') and hasattr(_module, '_stand_ins'):
        _module._stand_ins = lambda ns, specs, ask: __import__('contextlib').nullcontext()
    if _name.startswith('grader.') and hasattr(_module, '_traced'):
        _module._traced = lambda ns, name, shapes: __import__('contextlib').nullcontext(shapes.extend([[3, 2]] * 4))"""
    loop = WRONG["check_forward_is_vectorized"][0]  # a loop over the batch that calls the unit per example
    result = sandbox_grader.grade(
        notebook(tmp_path, solution_nb, "patch", {"imports": patch, "forward": loop}), "sequence_models"
    )
    assert lost(result) == {"forward": FULL["forward"] - 1.0}
    vectorized = next(c for c in result.exercise("forward").checks if c.name == "check_forward_is_vectorized")
    assert vectorized.points == 0
