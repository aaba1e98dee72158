"""Work the grader does on arguments the student chose (stand-in replies, large messages) is bounded before
it starts and charged to the call that asked for it (grader.checking.allowance); exceeding it is that call's failure."""

import time
from dataclasses import replace

import pytest
import torch

from grader.assignments.registry import get_assignment
from grader.checking.allowance import MIN_ELEMENTS, CallAllowance
from grader.checking.calls import StudentOverspent, StudentTimeout
from grader.jail.limits import Limits
from grader.sandbox.inprocess import InProcess
from tests.grader.jail_session import open_session

CELLS = [
    (
        0,
        """
import torch
def huge_partial(q, K, V, block_size):
    big = torch.ones(12000, q.shape[-1], dtype=q.dtype)
    return attention_partial(big, big, torch.ones(12000, V.shape[-1], dtype=V.dtype))[1][: q.shape[0]]
def whole_partial(q, K, V, block_size):  # not blockwise, but a fair request: the call's own scores
    return attention_partial(q, K, V)[1]
def blockwise(q, K, V, block_size):
    state = attention_partial(q, K[:0], V[:0])
    for start in range(0, K.shape[0], block_size):
        state = merge(state, attention_partial(q, K[start:start + block_size], V[start:start + block_size]))
    return state[1]
def long_tokens(tokens, E, W_xh, W_hh, b_h):
    return rnn_lm_states(torch.zeros(100_000, dtype=torch.long), E, W_xh, W_hh, b_h)[: len(tokens)]
def many_units(x, h, Wrec, Win):
    for _ in range(20):
        h = recurrent_unit(x, h, Wrec, Win)
    return h
def big_reply(T):
    return torch.zeros(4200, 4200, dtype=torch.float64)
def catches_the_refusal(q, K, V, block_size):
    try:
        big = torch.ones(12000, q.shape[-1], dtype=q.dtype)
        attention_partial(big, big, big)
    except BaseException:
        pass
    return attention_partial(q, K, V)[1]
""",
    )
]


def _declared(assignment: str, name: str):
    """The stand-in ``name``'s declaration gives it where another exercise requires it."""
    return get_assignment(assignment).exercise(name).required_stand_in


PARTIALS = {name: _declared("recursive_attention", name) for name in ("attention_partial", "merge")}


def _qkv(n, d=8, dtype=torch.float64):
    g = torch.Generator().manual_seed(n)
    return [torch.randn(n, d, generator=g, dtype=dtype) for _ in range(3)]


class Recording:
    """A stand-in that records the size of every argument list it was asked to compute on."""

    def __init__(self, inner):
        self.inner, self.sizes = inner, []
        self.name, self.params, self.cost, self.vjp = inner.name, inner.params, inner.cost, inner.vjp

    def __call__(self, args):
        self.sizes.append(sum(a.numel() for a in args if isinstance(a, torch.Tensor)))
        return self.inner(args)


def burning(inner, seconds):
    """``inner`` made slow: each reply burns ``seconds`` of the grader's CPU (not sleep: CPU time)."""

    def fn(*args):
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass
        return inner.fn(*args)

    return replace(inner, fn=fn)


@pytest.fixture(scope="module")
def session():
    with open_session(CELLS, Limits(call_timeout_s=5, submission_timeout_s=120)) as s:
        yield s


def test_the_allowance_is_relative_to_the_graded_call():
    small = CallAllowance.for_call(_qkv(8) + [2], cpu_s=0.1)
    assert small.max_elements == MIN_ELEMENTS
    large = CallAllowance.for_call(_qkv(4096, 64) + [64], cpu_s=2.0)
    # attention over the call's own 4096 x 4096 scores fits (a naive answer is judged, on memory),
    # 12000 x 12000 does not
    cost = PARTIALS["attention_partial"].cost
    assert large.refusal("attention_partial", *cost(_qkv(4096, 64))) is None
    assert large.refusal("attention_partial", *cost([torch.ones(12000, 64)] * 3))
    assert small.refusal("attention_partial", *cost([torch.ones(12000, 8)] * 3))


def test_the_cost_estimates_cover_what_the_reference_allocates():
    # causal_mask(T) holds T*T numbers; rnn_lm_states loops once per token
    assert _declared("sequence_models", "causal_mask").cost([10**6])[0] >= 10**12
    tokens, E, W = torch.zeros(2_000_000, dtype=torch.long), torch.ones(5, 3), torch.ones(3, 3)
    assert _declared("rnn_lm", "rnn_lm_states").cost([tokens, E, W, W, torch.ones(3)])[1] >= 2e6 * 20_000
    # merge's states are (s, v) pairs: their elements count
    state = (torch.ones(1000), torch.ones(1000, 64))
    assert _declared("recursive_attention", "merge").cost([state, state])[0] >= 2 * 65_000


def test_an_oversized_stand_in_request_is_refused_before_it_is_computed(session, monkeypatch):
    recorder = Recording(PARTIALS["attention_partial"])
    stand_ins = {**PARTIALS, "attention_partial": recorder}
    with pytest.raises(StudentOverspent) as caught:
        session.call("huge_partial", _qkv(16) + [4], stand_ins=stand_ins)
    assert "attention_partial" in caught.value.message and "allowed for a call on these inputs" in caught.value.message
    assert caught.value.kind == "resources"
    assert recorder.sizes == []  # the grader never computed it
    # Catching the refusal inside the student's code does not help: the call is over.
    with pytest.raises(StudentOverspent):
        session.call("catches_the_refusal", _qkv(16) + [4], stand_ins=stand_ins)


def test_honest_stand_in_use_is_served_whole_matrix_and_blockwise(session):
    q, K, V = _qkv(64)
    want = torch.softmax(q @ K.T / 8**0.5, dim=-1) @ V
    for name in ("whole_partial", "blockwise"):
        got = session.call(name, [q, K, V, 16], stand_ins=PARTIALS).value
        assert torch.allclose(got, want), name


def test_a_request_for_too_much_work_is_refused(session):
    E, W = torch.randn(5, 3, dtype=torch.float64), torch.randn(3, 3, dtype=torch.float64)
    with pytest.raises(StudentOverspent) as caught:
        session.call(
            "long_tokens",
            [torch.tensor([1, 2, 3]), E, W, W, torch.zeros(3, dtype=torch.float64)],
            stand_ins={"rnn_lm_states": _declared("rnn_lm", "rnn_lm_states")},
        )
    assert "operations" in caught.value.message and "CPU budget" in caught.value.message


def test_the_graders_time_on_stand_ins_counts_against_the_call(session):
    x, h = torch.randn(2, 3, dtype=torch.float64), torch.randn(2, 4, dtype=torch.float64)
    args = [x, h, torch.randn(4, 4, dtype=torch.float64), torch.randn(4, 3, dtype=torch.float64)]
    unit = _declared("sequence_models", "recurrent_unit")
    fast = session.call("many_units", args, stand_ins={"recurrent_unit": unit}).value
    assert fast.shape == (2, 4)
    # 20 replies of 10 ms of the grader's CPU each: twice the call's budget of 0.1 s, while the student's
    # own process only waits.
    with pytest.raises(StudentTimeout):
        session.call("many_units", args, stand_ins={"recurrent_unit": burning(unit, 0.01)})


def test_a_reply_larger_than_the_call_allows_is_not_read(session):
    with pytest.raises(StudentOverspent) as caught:
        session.call("big_reply", [5])
    assert "MiB at once" in caught.value.message


def test_in_process_calls_bound_stand_ins_too():
    student, _ = InProcess.from_cells(CELLS)
    recorder = Recording(PARTIALS["attention_partial"])
    with pytest.raises(StudentOverspent):
        student.call("catches_the_refusal", _qkv(16) + [4], stand_ins={**PARTIALS, "attention_partial": recorder})
    assert recorder.sizes and max(recorder.sizes) < 1000  # only the honest request after the refusal was computed
