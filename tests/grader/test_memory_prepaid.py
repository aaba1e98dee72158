"""Memory cannot be pre-paid (issue 28, rule 6): a call that fills a buffer an earlier cell allocated and
touched is charged for it, as root (the jail's cgroup) and without root (the user namespace's /proc path),
while blockwise code keeps well under the allowance. Fails on the commit before the rule, where the
buffer's pages were resident before the call and so counted for nothing."""

import os

import pytest
import torch

from grader.assignments.recursive_attention.blockwise import MEMORY_ALLOWANCE
from grader.jail.limits import Limits
from grader.sandbox.inprocess import InProcess
from tests.grader.jail_session import open_session

MiB = 2**20
CELLS = [
    (
        0,
        """
import math
import torch
scores = torch.empty(256, 32768, dtype=torch.float64)  # 64 MiB, allocated and touched by an earlier cell
scores.fill_(0.0)
""",
    ),
    (
        1,
        """
def prepaid(q, K, V, block_size):  # the whole score matrix, built inside the buffer made beforehand
    torch.matmul(q, K.T, out=scores)
    scores.div_(math.sqrt(q.shape[-1]))
    scores.sub_(scores.amax(-1, keepdim=True)).exp_()
    scores.div_(scores.sum(-1, keepdim=True))
    return scores @ V

def blockwise(q, K, V, block_size):  # online softmax: one block of scores at a time
    m = torch.full((q.shape[0],), float("-inf"), dtype=q.dtype)
    l = torch.zeros(q.shape[0], dtype=q.dtype)
    acc = torch.zeros(q.shape[0], V.shape[-1], dtype=q.dtype)
    for start in range(0, K.shape[0], block_size):
        s = q @ K[start:start + block_size].T / math.sqrt(q.shape[-1])
        m_new = torch.maximum(m, s.amax(-1))
        alpha, p = torch.exp(m - m_new), torch.exp(s - m_new[:, None])
        l, acc, m = l * alpha + p.sum(-1), acc * alpha[:, None] + p @ V[start:start + block_size], m_new
    return acc / l[:, None]
""",
    ),
]


def _peaks(student):
    g = torch.Generator().manual_seed(0)
    q, K, V = (torch.randn(*shape, generator=g, dtype=torch.float64) for shape in ((256, 4), (32768, 4), (32768, 4)))
    return {
        name: student.call(name, [q, K, V, 512], measure_memory=True).peak_bytes / MiB
        for name in ("blockwise", "prepaid")
    }


@pytest.mark.parametrize("rootless", [False, True], ids=["root", "user-namespace"])
def test_filling_a_buffer_made_by_an_earlier_cell_counts_as_held_by_the_call(rootless):
    if not rootless and os.geteuid() != 0:
        pytest.skip("the root path needs root")
    with open_session(CELLS, Limits(), rootless=rootless) as session:
        peaks = _peaks(session)
    assert peaks["prepaid"] > MEMORY_ALLOWANCE / MiB, peaks
    assert peaks["blockwise"] < MEMORY_ALLOWANCE / MiB / 2, peaks


def test_in_process_calls_count_what_they_touch_too():
    student, _ = InProcess.from_cells(CELLS)
    peaks = _peaks(student)
    assert peaks["prepaid"] > MEMORY_ALLOWANCE / MiB, peaks
