"""Stand-in classes keep what the student's class has (issue 36, item 1): while a class is graded, the class it
builds on is the student's own class with the course's layout imposed and the grader's forward, so the
attributes, helper methods and parameter-free children the student's other code reads are there, while the
computation, the parameters and their gradients stay the grader's. Through the sandbox and in-process."""

import pytest
import torch

from grader.checking.calls import StandInClass
from grader.checking.standins import StandIn
from grader.jail.limits import Limits
from grader.sandbox.inprocess import InProcess
from tests.grader.jail_session import open_session

CELLS = [
    (
        0,
        """
import torch
from torch import nn
forward_calls = []
class Cell(nn.Module):
    def __init__(self, i, h):
        super(Cell, self).__init__()  # the old spelling: names the class, which is the stand-in meanwhile
        self.hidden_dim = h
        self.input_to_hidden = nn.Linear(i, h)
        self.hidden_to_hidden = nn.Linear(h, h)
        self.activation = nn.Tanh()  # a registered child without parameters
        self.register_forward_hook(lambda module, args, out: out * 0)  # not the grader's computation
    def zeros(self, B):  # a helper method the layer calls
        return torch.zeros(B, self.hidden_dim, dtype=self.input_to_hidden.weight.dtype)
    def forward(self, x, h):
        forward_calls.append(1)
        return self.activation(self.input_to_hidden(x) + self.hidden_to_hidden(h))  # wrong: the course's is relu
class Layer(nn.Module):
    def __init__(self, i, h):
        super().__init__()
        self.cell = Cell(i, h)
    def forward(self, xs, h):
        out = xs.new_empty(xs.shape[0], xs.shape[1], self.cell.hidden_dim)
        h = h + self.cell.zeros(xs.shape[0]) + 0 * self.cell.activation(h)
        for t in range(xs.shape[1]):
            h = self.cell(xs[:, t], h=h)
            out = out.index_copy(1, torch.tensor([t]), h[:, None])
        return out
def forward_calls_made():
    return torch.tensor(float(len(forward_calls)))
class Fused(nn.Module):  # a wrong layout: one Linear over the concatenation, and a parameter of its own
    def __init__(self, i, h):
        super().__init__()
        self.hidden_dim = h
        self.both = nn.Linear(i + h, h)
        self.scale = nn.Parameter(torch.ones(h))
        self.register_buffer("steps", torch.zeros(()))
    def forward(self, x, h):
        return torch.relu(self.both(torch.cat([x, h], -1))) * self.scale
class FusedLayer(Layer):
    def __init__(self, i, h):
        nn.Module.__init__(self)
        self.cell = Fused(i, h)
    def forward(self, xs, h):
        return torch.stack([h := self.cell(xs[:, t], h) for t in range(xs.shape[1])], 1)
class Unwritten(nn.Module):
    def __init__(self, i, h):
        super().__init__()
        raise NotImplementedError
class UnwrittenLayer(FusedLayer):
    def __init__(self, i, h):
        nn.Module.__init__(self)
        self.cell = Unwritten(i, h)
""",
    )
]


def step(x, h, W1, b1, W2, b2):
    return torch.relu(x @ W1.T + b1 + h @ W2.T + b2)


SPEC = {
    "init": ["i", "h"],
    "forward": ["x", "h_prev"],
    "linears": [["input_to_hidden", "i", "h"], ["hidden_to_hidden", "h", "h"]],
}
NAMES = ["hidden_to_hidden.bias", "hidden_to_hidden.weight", "input_to_hidden.bias", "input_to_hidden.weight"]


def stand_in(name):
    return StandInClass(name, SPEC, StandIn(f"{name}.forward", ("x", "h_prev", "W1", "b1", "W2", "b2"), step))


@pytest.fixture(scope="module", params=["sandbox", "in-process"])
def student(request):
    if request.param == "in-process":
        yield InProcess.from_cells(CELLS)[0]
        return
    with open_session(CELLS, Limits()) as session:
        yield session


def _run(student, layer: str, cell: str):
    handle = student.construct(layer, [3, 4], classes={cell: stand_in(cell)})
    state = student.state(layer, handle)
    assert sorted(state) == [f"cell.{n}" for n in NAMES]  # the course's layout, whatever the student's cell had
    student.call_method(layer, handle, [], method="double")
    g = torch.Generator().manual_seed(1)
    weights = {k: torch.randn(v.shape, dtype=torch.float64, generator=g) for k, v in state.items()}
    student.load(layer, handle, weights)
    xs, h = torch.randn(2, 5, 3, dtype=torch.float64, generator=g), torch.randn(2, 4, dtype=torch.float64, generator=g)
    reply = student.call_method(
        layer, handle, [xs, h], grad_params=True, cotangent=torch.ones(2, 5, 4, dtype=torch.float64)
    )
    W = [
        weights[f"cell.{k}"]
        for k in ("input_to_hidden.weight", "input_to_hidden.bias", "hidden_to_hidden.weight", "hidden_to_hidden.bias")
    ]
    states, state_t = [], h
    for t in range(5):
        state_t = step(xs[:, t], state_t, *W)
        states.append(state_t)
    return reply, torch.stack(states, 1), state


def test_the_stand_in_keeps_the_students_attributes_helpers_and_children(student):
    reply, want, state = _run(student, "Layer", "Cell")
    assert torch.allclose(reply.value, want)  # the grader's relu, not the student's tanh nor its hook's zeros
    assert [s.name for s in reply.served] == ["Cell.forward"] * 5
    assert float(student.call("forward_calls_made", []).value) == 0  # the student's own forward never ran
    assert set(reply.param_grads) == set(state) and all(g.abs().sum() > 0 for g in reply.param_grads.values())


@pytest.mark.parametrize("layer,cell", [("FusedLayer", "Fused"), ("UnwrittenLayer", "Unwritten")])
def test_a_cell_laid_out_otherwise_or_not_written_gets_the_course_layout(student, layer, cell):
    reply, want, _ = _run(student, layer, cell)
    assert torch.allclose(reply.value, want)
