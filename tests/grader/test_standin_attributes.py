"""A helper's failure costs only the helper (issue 51, item 4): a stand-in class laid out without the student's
``__init__`` (it raised, ended the process or hung) still holds the attributes its declaration names, from the
constructor's arguments, so a correct class that reads ``self.cell.hidden_dim`` keeps every point.

Today a ``RecurrentCell`` whose ``__init__`` sets ``hidden_dim`` then hangs made a correct ``RNNLayer`` lose 7 of 7:
the retry laid the cell out bare, and the layer's ``self.cell.hidden_dim`` raised AttributeError."""

import json

import pytest
import torch

from grader.assignments.lm_modules.stand_ins import RECURRENT_CELL
from grader.jail.limits import Limits
from grader.sandbox.inprocess import InProcess
from reference.lm_modules import recurrent_cell_step
from tests.grader.jail_session import open_session

from ..corpus.courses import replaced
from .fair_grading import solution_notebook

HANGING_CELL = """
class RecurrentCell(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.hidden_dim = hidden_dim
        while True:
            pass
    def forward(self, x, h_prev):
        return torch.relu(x)
"""
RAISING_CELL = """
class RecurrentCell(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        raise NotImplementedError
    def forward(self, x, h_prev):
        raise NotImplementedError
"""
LAYER = """
class RNNLayer(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.cell = RecurrentCell(input_dim, hidden_dim)
    def forward(self, x_seq, h):
        out = x_seq.new_zeros(x_seq.shape[0], x_seq.shape[1], self.cell.hidden_dim)  # (B, T, H)
        assert x_seq.shape[2] == self.cell.input_dim
        for t in range(x_seq.shape[1]):
            h = self.cell(x_seq[:, t, :], h)  # (B, H)
            out[:, t] = h
        return out
"""
PRELUDE = "import torch\nfrom torch import nn\n"


def _layer_output(student) -> tuple[torch.Tensor, torch.Tensor]:
    """(what the student's layer returns over the grader's cell, the course's states) for seeded weights."""
    handle = student.construct("RNNLayer", [3, 4], classes={"RecurrentCell": RECURRENT_CELL})
    student.call_method("RNNLayer", handle, [], method="double")
    state = student.state("RNNLayer", handle)
    g = torch.Generator().manual_seed(0)
    xs, h = torch.randn(2, 5, 3, dtype=torch.float64, generator=g), torch.randn(2, 4, dtype=torch.float64, generator=g)
    names = ("input_to_hidden.weight", "input_to_hidden.bias", "hidden_to_hidden.weight", "hidden_to_hidden.bias")
    weights = [state[f"cell.{k}"] for k in names]
    return student.call_method("RNNLayer", handle, [xs, h]).value, _states(xs, h, weights)


def _states(xs, h, weights) -> torch.Tensor:
    states = []
    for t in range(xs.shape[1]):
        states.append(h := recurrent_cell_step(xs[:, t], h, *weights))
    return torch.stack(states, 1)  # (B, T, H)


def test_a_cell_whose_init_raises_is_laid_out_with_its_declared_attributes_in_process():
    student = InProcess.from_cells([(0, PRELUDE + RAISING_CELL + LAYER)])[0]
    got, want = _layer_output(student)  # today: AttributeError, 'RecurrentCell' object has no attribute 'hidden_dim'
    assert torch.allclose(got, want)


def test_a_cell_whose_init_hangs_is_retried_with_its_declared_attributes_through_the_sandbox():
    with open_session([(0, PRELUDE + HANGING_CELL + LAYER)], Limits(call_timeout_s=2)) as session:
        got, want = _layer_output(session)  # today: AttributeError after the retry without the student's __init__
        assert torch.allclose(got, want)
        assert "RecurrentCell" in session._unbuildable  # laid out alone: the hang was the helper's


@pytest.fixture(scope="module")
def hanging_cell_notebook(tmp_path_factory):
    """The lm_modules solution with a RecurrentCell that sets hidden_dim then hangs, and a correct RNNLayer that
    reads self.cell.hidden_dim."""
    nb = replaced(solution_notebook("lm_modules"), {"RecurrentCell": HANGING_CELL, "RNNLayer": LAYER})
    path = tmp_path_factory.mktemp("hanging") / "lm_modules.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_a_correct_layer_on_a_hanging_cell_keeps_every_point(sandbox_grader, hanging_cell_notebook):
    scores = {e.id: e.score for e in sandbox_grader.grade(hanging_cell_notebook, "lm_modules").exercises}
    assert scores["RNNLayer"] == 7.0, scores  # today 0: one root cause, the cell's, charged twice
    assert scores["RecurrentCell"] < 7.0, scores
