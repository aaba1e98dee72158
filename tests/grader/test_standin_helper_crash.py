"""A helper class whose ``__init__`` ends the process or hangs costs only its own exercise (issue 36, one root
cause one charge): the class built on it is constructed again with the helper laid out by the grader alone, and
keeps that layout for the rest of the submission. A class whose own ``__init__`` ends the process is still
charged. Through the sandbox (in-process, ``os._exit`` would end the test itself)."""

import pytest
import torch

from grader.checking.calls import StudentCrashed, StudentTimeout
from grader.jail.limits import Limits
from tests.grader.jail_session import open_session
from tests.grader.test_standin_classes import stand_in, step

CELLS = [
    (
        0,
        """
import os
import torch
from torch import nn
class Exiting(nn.Module):
    def __init__(self, i, h):
        super().__init__()
        os._exit(0)
class Hanging(nn.Module):
    def __init__(self, i, h):
        super().__init__()
        while True:
            pass
class Fine(nn.Module):
    def __init__(self, i, h):
        super().__init__()
        self.hidden_dim = h
class Layer(nn.Module):
    def forward(self, xs, h):
        return torch.stack([h := self.cell(xs[:, t], h) for t in range(xs.shape[1])], 1)
class OnExiting(Layer):
    def __init__(self, i, h):
        super().__init__()
        self.cell = Exiting(i, h)
class OnHanging(Layer):
    def __init__(self, i, h):
        super().__init__()
        self.cell = Hanging(i, h)
class ExitsItself(nn.Module):
    def __init__(self, i, h):
        super().__init__()
        self.cell = Fine(i, h)
        os._exit(3)
""",
    )
]


@pytest.fixture()
def session():
    with open_session(CELLS, Limits()) as opened:
        yield opened


def _forward(session, layer: str, handle: str):
    g = torch.Generator().manual_seed(0)
    xs, h = torch.randn(2, 3, 3, dtype=torch.float64, generator=g), torch.randn(2, 4, dtype=torch.float64, generator=g)
    session.call_method(layer, handle, [], method="double")
    state = session.state(layer, handle)
    W = [
        state[f"cell.{k}"]
        for k in ("input_to_hidden.weight", "input_to_hidden.bias", "hidden_to_hidden.weight", "hidden_to_hidden.bias")
    ]
    want, state_t = [], h
    for t in range(3):
        want.append(state_t := step(xs[:, t], state_t, *W))
    return session.call_method(layer, handle, [xs, h]).value, torch.stack(want, 1)


@pytest.mark.parametrize("layer,cell", [("OnExiting", "Exiting"), ("OnHanging", "Hanging")])
def test_a_helper_that_ends_the_process_or_hangs_is_laid_out_alone(session, layer, cell):
    handle = session.construct(layer, [3, 4], classes={cell: stand_in(cell)})
    got, want = _forward(session, layer, handle)
    assert torch.allclose(got, want)
    assert cell in session._unbuildable
    restarts = session.restarts
    session.construct(layer, [3, 4], classes={cell: stand_in(cell)})  # laid out alone at once: no second crash
    assert session.restarts == restarts


def test_a_class_that_ends_the_process_itself_is_still_charged(session):
    with pytest.raises((StudentCrashed, StudentTimeout)):
        session.construct("ExitsItself", [3, 4], classes={"Fine": stand_in("Fine")})
    assert "Fine" not in session._unbuildable  # its helper is not blamed
    with pytest.raises(StudentCrashed, match="not called again"):
        session.construct("ExitsItself", [3, 4], classes={"Fine": stand_in("Fine")})
