"""The first-call allowance belongs to each callable (issue 36, item 4): a function, a class's construction and
each method of its objects get one stretch each for one-time work (grader.sandbox.warmup), with the same
bounds as a function's. Before, the allowance was keyed by the class's name, and its construction spent it:
a forward whose first call imports a module timed out while the same import in __init__ passed."""

import pytest
import torch

from grader.checking.calls import StudentTimeout
from grader.jail.limits import Limits
from tests.grader.jail_session import open_session

CELLS = [
    (
        0,
        """
import os, sys, torch
from torch import nn
# Modules loaded on first use: 200 KB of source each; importing `lazy_forward` or `lazy_init` also computes for
# 0.3 s of CPU (three times a call's budget), the way a library builds its tables once.
os.makedirs('/tmp/scratch/lazy', exist_ok=True)
for name, work in (('lazy_forward', 0.3), ('lazy_init', 0.3), ('lazy_light', 0.0)):
    with open(f'/tmp/scratch/lazy/{name}.py', 'w') as f:
        f.write('PAD = "' + 'x' * 200_000 + '"\\nimport time\\n_start = time.process_time()\\n'
                f'while time.process_time() - _start < {work}:\\n    for _ in range(100_000):\\n        pass\\n')
sys.path.insert(0, '/tmp/scratch/lazy')
forward_calls = []
class LazyForward(nn.Module):
    def __init__(self, n):
        super().__init__()
        import lazy_init  # one-time work in __init__ (its own allowance)
        self.scale = nn.Parameter(torch.full((n,), 2.0))
    def forward(self, x):
        forward_calls.append(1)
        import lazy_forward  # and in forward's first call
        return x * self.scale
class SpinsAfterLoading(nn.Module):
    def forward(self, x):
        import lazy_light
        while True:
            pass
def how_many_forward_calls():
    return torch.tensor(float(len(forward_calls)))
""",
    )
]


@pytest.fixture
def session():
    with open_session(CELLS, Limits(call_timeout_s=5, submission_timeout_s=120)) as s:
        yield s


def test_a_method_gets_its_own_first_call_allowance_after_the_construction(session):
    handle = session.construct("LazyForward", [3])
    x = torch.ones(2, 3)
    assert torch.equal(session.call_method("LazyForward", handle, [x], method="forward").value, x * 2)
    assert float(session.call("how_many_forward_calls", []).value) == 2  # the first call, then the one judged
    other = session.construct("LazyForward", [3])
    assert torch.equal(session.call_method("LazyForward", other, [x], method="forward").value, x * 2)
    assert float(session.call("how_many_forward_calls", []).value) == 3  # warm: made once


def test_the_stretch_of_a_method_is_bounded_as_a_functions(session):
    handle = session.construct("SpinsAfterLoading", [])
    with pytest.raises(StudentTimeout, match=r"stopped after 1 s of CPU"):
        session.call_method("SpinsAfterLoading", handle, [torch.ones(2)], method="forward")


def test_each_callable_has_a_key_of_its_own():
    from grader.sandbox.warmup import callable_key

    keys = {
        callable_key("f"),
        callable_key("Cell", "construct", "Cell#1"),
        callable_key("Cell", "call", "Cell#1", "forward"),
        callable_key("Cell", "call", "Cell#1"),
        callable_key("Cell", "call", "Cell#1", "double"),
    }
    assert len(keys) == 5
    assert callable_key("Cell", "call", "Cell#1", "forward") == callable_key("Cell", "call", "Cell#2", "forward")
