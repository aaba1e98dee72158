"""Objects by handle (grader.jail.objects, grader.checking.objectcalls): the grader constructs a student class in the
student's process, calls it, reads and loads its parameters; stand-in classes, seeded generators and
grader-served callables are built there on its behalf. The same through the sandbox and in-process."""

import pytest
import torch

from grader.checking.calls import Made, StandInClass, StudentRaised
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
class Cell(nn.Module):
    def __init__(self, i, h):
        super().__init__()
        self.input_to_hidden = nn.Linear(i, h)
        self.hidden_to_hidden = nn.Linear(h, h)
    def forward(self, x, h):
        return torch.tanh(self.input_to_hidden(x) + self.hidden_to_hidden(h))  # wrong: the course's is relu
class Layer(nn.Module):
    def __init__(self, i, h):
        super().__init__()
        self.cell = Cell(i, h)
    def forward(self, xs, h):
        out = []
        for t in range(xs.shape[1]):
            h = self.cell(xs[:, t], h)
            out.append(h)
        return torch.stack(out, 1)
def sample(logits, g):
    return torch.multinomial(torch.softmax(logits, -1), 1, generator=g)[:, 0]
def use_model(model, tokens):
    return model(tokens)
def draw_twice(logits, g):
    return torch.stack([sample(logits, g), sample(logits, g)])
""",
    )
]


def step(x, h, W1, b1, W2, b2):
    return torch.relu(x @ W1.T + b1 + h @ W2.T + b2)


CELL = StandInClass(
    "Cell",
    {
        "init": ["i", "h"],
        "forward": ["x", "h"],
        "linears": [["input_to_hidden", "i", "h"], ["hidden_to_hidden", "h", "h"]],
    },
    StandIn("Cell.forward", ("x", "h", "W1", "b1", "W2", "b2"), step),
)


@pytest.fixture(scope="module", params=["sandbox", "in-process"])
def student(request):
    if request.param == "in-process":
        yield InProcess.from_cells(CELLS)[0]
        return
    with open_session(CELLS, Limits()) as session:
        yield session


def _random_like(state):
    g = torch.Generator().manual_seed(0)
    return {k: torch.randn(v.shape, dtype=torch.float64, generator=g) for k, v in state.items()}


def test_a_class_is_built_read_loaded_and_called_by_handle(student):
    handle = student.construct("Cell", [3, 4])
    state = student.state("Cell", handle)
    assert {k: tuple(v.shape) for k, v in state.items()} == {
        "input_to_hidden.weight": (4, 3),
        "input_to_hidden.bias": (4,),
        "hidden_to_hidden.weight": (4, 4),
        "hidden_to_hidden.bias": (4,),
    }
    student.call_method("Cell", handle, [], method="double")
    weights = _random_like(state)
    student.load("Cell", handle, weights)
    x, h = torch.randn(2, 3, dtype=torch.float64), torch.randn(2, 4, dtype=torch.float64)
    reply = student.call_method(
        "Cell", handle, [x, h], grad_wrt=[0], grad_params=True, cotangent=torch.ones(2, 4, dtype=torch.float64)
    )
    want = torch.tanh(
        x @ weights["input_to_hidden.weight"].T
        + weights["input_to_hidden.bias"]
        + h @ weights["hidden_to_hidden.weight"].T
        + weights["hidden_to_hidden.bias"]
    )
    assert torch.allclose(reply.value, want)
    assert reply.grads[0].shape == (2, 3) and set(reply.param_grads) == set(state)
    assert torch.allclose(reply.param_grads["input_to_hidden.bias"], (1 - want**2).sum(0))
    with pytest.raises(StudentRaised, match="Missing key|Unexpected key|size mismatch"):
        student.load("Cell", handle, {"weight": torch.zeros(4, 3)})


def test_a_stand_in_class_replaces_the_students_part(student):
    layer = student.construct("Layer", [3, 4], classes={"Cell": CELL})
    state = student.state("Layer", layer)
    assert sorted(state) == [
        "cell.hidden_to_hidden.bias",
        "cell.hidden_to_hidden.weight",
        "cell.input_to_hidden.bias",
        "cell.input_to_hidden.weight",
    ]
    student.call_method("Layer", layer, [], method="double")
    weights = _random_like(state)
    student.load("Layer", layer, weights)
    xs, h = torch.randn(2, 5, 3, dtype=torch.float64), torch.randn(2, 4, dtype=torch.float64)
    reply = student.call_method(
        "Layer", layer, [xs, h], grad_params=True, cotangent=torch.ones(2, 5, 4, dtype=torch.float64)
    )
    W = [
        weights[f"cell.{k}"]
        for k in ("input_to_hidden.weight", "input_to_hidden.bias", "hidden_to_hidden.weight", "hidden_to_hidden.bias")
    ]
    states, state_t = [], h
    for t in range(5):
        state_t = step(xs[:, t], state_t, *W)
        states.append(state_t)
    assert torch.allclose(reply.value, torch.stack(states, 1))  # the grader's relu cell, not the student's tanh
    assert [s.name for s in reply.served] == ["Cell.forward"] * 5
    assert set(reply.param_grads) == set(state) and all(g.abs().sum() > 0 for g in reply.param_grads.values())


def test_made_arguments_generators_and_served_callables(student):
    draws = [student.call("sample", [torch.zeros(50, 4), Made("generator", seed=seed)]).value for seed in (3, 3, 4)]
    assert torch.equal(draws[0], draws[1]) and not torch.equal(draws[0], draws[2])
    model = StandIn("model", ("tokens",), lambda tokens: torch.nn.functional.one_hot(tokens, 7).double())
    reply = student.call("use_model", [Made("served", name="model", handler=model), torch.tensor([[1, 2]])])
    assert torch.equal(reply.value, torch.nn.functional.one_hot(torch.tensor([[1, 2]]), 7).double())
    assert [s.name for s in reply.served] == ["model"]


def test_a_generator_passed_to_a_stand_in_goes_on_from_the_state_the_graders_draws_leave(student):
    """A torch.Generator cannot cross the boundary: its state does, both ways."""

    def grader_sample(logits, generator):
        return torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)[:, 0]

    served = {"sample": StandIn("sample", ("logits", "g"), grader_sample)}
    logits = torch.zeros(40, 5, dtype=torch.float64)
    reply = student.call("draw_twice", [logits, Made("generator", seed=9)], stand_ins=served)
    g = torch.Generator().manual_seed(9)
    want = torch.stack([grader_sample(logits, g), grader_sample(logits, g)])
    assert torch.equal(reply.value, want)  # the second draw continued the stream, it did not repeat the first
    assert [s.name for s in reply.served] == ["sample", "sample"]
