"""A call that hoards memory meets the memory limit, not its CPU budget (grader.sandbox.warmup, CallClock):
writing fresh memory costs user time that grows with the machine's memory traffic, so a call that fills its
whole allowance could otherwise end as "out of memory" on a quiet machine and as "out of time" on a busy
one. A call that grows fast gets a bounded budget once; code that only computes keeps the ordinary one."""

import pytest
import torch

from grader.checking.calls import StudentRaised, StudentTimeout
from grader.jail.limits import Limits
from tests.grader.jail_session import open_session

CELLS = [
    """
import numpy as np
def hoards(x):
    kept = []
    while True:
        kept.append(np.ones(2**24))  # 128 MiB, written, until the memory limit
def hoards_then_spins(x):
    kept = [np.ones(2**25)]  # 256 MiB, written
    while True:
        pass
def spins(x):
    while True:
        pass
"""
]
# A budget far below what filling 2 GiB of fresh memory takes on any machine (60-180 ms of user time here),
# so without the stretch the call always ends out of time.
TIGHT = Limits(call_cpu_s=0.02, memory_mb=2048, call_timeout_s=20, submission_timeout_s=120)


@pytest.fixture(scope="module")
def tight():
    with open_session(CELLS, TIGHT) as s:
        yield s


@pytest.fixture(scope="module")
def session():
    with open_session(CELLS, Limits(call_timeout_s=20, submission_timeout_s=120)) as s:
        yield s


def test_a_call_that_fills_its_memory_ends_out_of_memory(tight):
    for _ in range(2):  # every call, not only the first
        with pytest.raises(StudentRaised, match="MemoryError"):
            tight.call("hoards", [torch.ones(2)])


def test_the_stretch_is_bounded(session):
    # the ordinary budget (0.1 s): 256 MiB are written long before it is used up, then the call spins
    with pytest.raises(StudentTimeout, match=r"stopped after 1 s of CPU"):
        session.call("hoards_then_spins", [torch.ones(2)])


def test_code_that_only_computes_keeps_its_budget(session):
    with pytest.raises(StudentTimeout, match=r"stopped after 0\.1 s of CPU"):
        session.call("spins", [torch.ones(2)])
