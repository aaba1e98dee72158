"""Every call a memory check makes on its large inputs gets the budget of a large call (Limits.large_call_cpu_s),
not only the one whose memory is measured: a blockwise answer with wrong values is called again with each input
changed (grader.assignments.recursive_attention.blockwise._ignored_here), and under the ordinary 0.1 s such a
call, as large as the measured one, ended in or out of time with the machine's state."""

import pytest

from grader.assignments.recursive_attention.blockwise import check_online_softmax_attention_memory
from grader.jail.limits import Limits
from tests.grader.jail_session import open_session

SLOW_AND_WRONG = """
import math, time, torch
LARGE_CALLS = []
def online_softmax_attention(q, K, V, block_size):
    if K.shape[0] > 10_000:  # on the memory check's inputs: 0.3 s of CPU, well within a large call's 2 s
        LARGE_CALLS.append(1)
        start = time.process_time()
        while time.process_time() - start < 0.3:
            pass
    out = torch.zeros(q.shape[0], V.shape[1], dtype=q.dtype)
    for k0 in range(0, K.shape[0], block_size):  # each block's softmax on its own: never rescaled
        scores = q @ K[k0:k0 + block_size].T / math.sqrt(q.shape[1])  # (Nq, block)
        out += torch.softmax(scores, dim=-1) @ V[k0:k0 + block_size]
    return out
"""


@pytest.fixture(scope="module")
def session():
    with open_session([SLOW_AND_WRONG], Limits(call_timeout_s=20, submission_timeout_s=120)) as s:
        yield s


def test_a_slow_blockwise_answer_with_wrong_values_is_judged_for_memory(session):
    check_online_softmax_attention_memory(session)  # raises on a failure, a timeout included
    assert len(session.get("LARGE_CALLS")) == 4  # the measured call, then one with each of q, K and V changed
