"""One-time work never fails correct code (grader.sandbox.warmup): a first call that loads code from disk
may run past its CPU budget once and is then judged on a second, warm call; code that only computes
gets no such allowance, and a function that stays slow once warm is still charged."""

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
# Modules loaded on first use, as torch loads sympy: 200 KB of source each; `lazy_heavy` also computes for
# 0.3 s of CPU when imported (three times a call's budget), the way a library builds its tables once.
os.makedirs('/tmp/scratch/lazy', exist_ok=True)
for name, work in (('lazy_heavy', 0.3), ('lazy_light', 0.0)):
    with open(f'/tmp/scratch/lazy/{name}.py', 'w') as f:
        f.write('PAD = "' + 'x' * 200_000 + '"\\nimport time\\n_start = time.process_time()\\n'
                f'while time.process_time() - _start < {work}:\\n    for _ in range(100_000):\\n        pass\\n')
sys.path.insert(0, '/tmp/scratch/lazy')
calls = []
def uses_a_lazy_library(x):
    calls.append(1)
    import lazy_heavy
    return x * 2
def broadcasting(x):  # torch imports part of sympy on the first broadcast_shapes
    torch.broadcast_shapes(x.shape, (1, x.shape[-1]))
    return x * 2
def spins(x):
    while True:
        pass
def loads_then_spins(x):
    import lazy_light
    while True:
        pass
def slow_every_time(x):
    import lazy_heavy
    import time
    start = time.process_time()
    while time.process_time() - start < 0.3:  # user time: the clock is read every 100,000 steps only
        for _ in range(100_000):
            pass
    return x * 2
def how_many_calls(x):
    return torch.tensor(float(len(calls)))
""",
    )
]


@pytest.fixture
def session():
    with open_session(CELLS, Limits(call_timeout_s=5, submission_timeout_s=120)) as s:
        yield s


def test_a_first_call_that_loads_code_is_judged_warm(session):
    x = torch.ones(2, 3)
    assert torch.equal(session.call("uses_a_lazy_library", [x]).value, x * 2)
    assert float(session.call("how_many_calls", [x]).value) == 2  # the first call, then the one judged
    assert torch.equal(session.call("uses_a_lazy_library", [x]).value, x * 2)
    assert float(session.call("how_many_calls", [x]).value) == 3  # warm calls are made once
    assert torch.equal(session.call("broadcasting", [x]).value, x * 2)


def test_code_that_only_computes_gets_the_ordinary_budget(session):
    with pytest.raises(StudentTimeout, match=r"stopped after 0\.1 s of CPU"):
        session.call("spins", [torch.ones(2)])


def test_the_stretch_is_bounded_and_given_once(session):
    with pytest.raises(StudentTimeout, match=r"stopped after 1 s of CPU"):
        session.call("loads_then_spins", [torch.ones(2)])
    with pytest.raises(StudentTimeout, match=r"stopped after 0\.1 s of CPU"):
        session.call("slow_every_time", [torch.ones(2)])  # loaded fine, then charged on the warm call
