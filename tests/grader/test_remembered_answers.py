"""The grading process answers a stand-in request it has answered before from memory (grader.sandbox.remembered):
the same reply bytes, the same record of the call, the same charge to the call's allowance, and only for the very
stand-in that computed it."""

import time
from dataclasses import replace

import pytest
import torch

from grader.assignments.registry import get_assignment
from grader.checking.calls import Served, StudentTimeout
from grader.jail.limits import Limits
from grader.sandbox import remembered
from grader.sandbox.client import Session, Zygote

CELLS = [
    (
        0,
        """
def three_steps(x, h, Wrec, Win):
    for _ in range(3):
        h = recurrent_unit(x, h, Wrec, Win)
    return h
""",
    )
]
UNIT = get_assignment("sequence_models").exercise("recurrent_unit").served


def _args(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randn(2, 3, generator=g, dtype=torch.float64),
        torch.randn(2, 4, generator=g, dtype=torch.float64),
        torch.randn(4, 4, generator=g, dtype=torch.float64) / 2,
        torch.randn(4, 3, generator=g, dtype=torch.float64),
    ]


def counting(stand_in, seconds: float = 0.0):
    """``stand_in`` with a count of the replies the grader computed (each burning ``seconds`` of its CPU)."""
    computed = []

    def fn(*args):
        computed.append(1)
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass
        return stand_in.fn(*args)

    return replace(stand_in, fn=fn), computed


@pytest.fixture(scope="module")
def zygote():
    with Zygote() as z:
        z.wait_ready()
        yield z


@pytest.fixture(autouse=True)
def empty_memory():
    remembered.ANSWERS._answers.clear()
    yield
    remembered.ANSWERS._answers.clear()


def _call(zygote, stand_ins, args, limits=Limits(call_timeout_s=5, submission_timeout_s=60)):
    session = Session(zygote, CELLS, limits).open()  # a new notebook's process each time
    try:
        return session.call("three_steps", args, stand_ins=stand_ins)
    finally:
        session.close()


def test_a_request_seen_before_is_answered_from_memory_with_the_same_reply_and_record(zygote):
    unit, computed = counting(UNIT)
    args = _args()
    first = _call(zygote, {"recurrent_unit": unit}, args)
    assert len(computed) == 3
    second = _call(zygote, {"recurrent_unit": unit}, args)
    assert len(computed) == 3  # the second notebook's three requests were answered from memory
    assert torch.equal(first.value, second.value)
    h = args[1]
    for _ in range(3):
        h = UNIT.fn(args[0], h, args[2], args[3])
    assert torch.equal(second.value, h)
    # The grader's own record of the calls is the same: 3 calls of recurrent_unit on these shapes.
    assert second.served == first.served == (Served("recurrent_unit", ((2, 3), (2, 4), (4, 4), (4, 3))),) * 3


def test_other_bytes_or_another_stand_in_of_the_same_name_are_computed(zygote):
    unit, computed = counting(UNIT)
    _call(zygote, {"recurrent_unit": unit}, _args(0))
    _call(zygote, {"recurrent_unit": unit}, _args(1))  # other arguments: other requests
    assert len(computed) == 6
    other, other_computed = counting(replace(UNIT, fn=lambda x, h, Wrec, Win: 0.5 * UNIT.fn(x, h, Wrec, Win)))
    got = _call(zygote, {"recurrent_unit": other}, _args(0)).value
    assert len(other_computed) == 3  # not the answers the first stand-in gave to the same bytes
    h = _args(0)[1]
    for _ in range(3):
        h = 0.5 * UNIT.fn(_args(0)[0], h, _args(0)[2], _args(0)[3])
    assert torch.equal(got, h)


def test_a_remembered_answer_is_charged_to_the_call_as_when_it_was_computed(zygote):
    # Each reply took 60 ms of the grader's CPU when it was computed: three of them fit a budget of 1 s ...
    slow, computed = counting(UNIT, seconds=0.06)
    _call(zygote, {"recurrent_unit": slow}, _args(), Limits(call_cpu_s=1.0, call_timeout_s=5, submission_timeout_s=60))
    assert len(computed) == 3
    # ... and not one of 0.1 s, even though the grader now computes nothing for them.
    with pytest.raises(StudentTimeout):
        _call(
            zygote,
            {"recurrent_unit": slow},
            _args(),
            Limits(call_cpu_s=0.1, warmup_cpu_s=0.001, call_timeout_s=5, submission_timeout_s=60),
        )
    assert len(computed) == 3


def test_only_fixed_functions_and_small_answers_are_kept_and_the_store_is_bounded():
    store = remembered.Remembered(max_bytes=3 * 1200, max_answer_bytes=1000)
    answer = remembered.Answer("recurrent_unit", UNIT, 1, 1.0, None, 0.0, b"x" * 900)
    store.keep(b"a" * 16, answer)
    assert store.get(b"a" * 16, {"recurrent_unit": UNIT}) is answer
    assert store.get(b"a" * 16, {"recurrent_unit": replace(UNIT)}) is None  # an equal stand-in, not the same one
    assert store.get(b"a" * 16, {}) is None
    store.keep(b"b" * 16, replace(answer, frame=b"x" * 1001))  # too large to keep
    store.keep(b"c" * 16, replace(answer, handler=lambda args: None))  # not a StandIn: may not be a fixed function
    assert len(store) == 1
    for key in (b"d" * 16, b"e" * 16, b"f" * 16):
        store.keep(key, answer)
    assert len(store) <= 3  # past max_bytes it started again
    assert not remembered.is_request(b'{"ok":true,"values":{}}') and remembered.is_request(
        b'{"op":"helper","name":"x"}'
    )
