"""Realistic mistakes that the self-checks used to answer with [ok] while the grader charged them (issue 29,
found by `seqgrade audit`): each is written the way a student writes it, the grader must charge it, and
the self-check cell of its exercise must now fail."""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings

from grader.assignments.registry import get_assignment
from grader.course.release import release
from grader.judge import judge_exercise
from grader.notebook import is_test_cell
from grader.sandbox.inprocess import InProcess

from ..test_selfchecks import Notebook

MISTAKES = {
    "tiled_float32_buffers": (
        "recursive_attention",
        "tiled_attention",
        """
def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    Nq, d = Q.shape
    O, lse = torch.zeros(Nq, V.shape[-1]), torch.zeros(Nq)  # float32 buffers: rows written into them are rounded
    for q0 in range(0, Nq, block_q):
        Qb = Q[q0:q0 + block_q] / math.sqrt(d)
        n = Qb.shape[0]
        m = torch.full((n,), -math.inf, dtype=Q.dtype)
        l = torch.zeros(n, dtype=Q.dtype)
        acc = torch.zeros(n, V.shape[-1], dtype=Q.dtype)
        for k0 in range(0, K.shape[0], block_k):
            s = Qb @ K[k0:k0 + block_k].T
            if causal:
                s = s.masked_fill(torch.arange(k0, k0 + s.shape[1])[None] > \
torch.arange(q0, q0 + n)[:, None], -math.inf)
            m_new = torch.maximum(m, s.max(dim=-1).values)
            p = torch.exp(s - m_new[:, None])
            l = l * torch.exp(m - m_new) + p.sum(dim=-1)
            acc = acc * torch.exp(m - m_new)[:, None] + p @ V[k0:k0 + block_k]
            m = m_new
        O[q0:q0 + n] = acc / l[:, None]
        lse[q0:q0 + n] = m + torch.log(l)
    return O, lse
""",
    ),
    "partial_float32_empty_state": (
        "recursive_attention",
        "attention_partial",
        """
def attention_partial(q, K, V):
    if K.shape[0] == 0:  # torch's default dtype, not the inputs'
        return torch.full(q.shape[:-1], -math.inf), torch.zeros(*q.shape[:-1], V.shape[-1])
    scores = q @ K.T / math.sqrt(q.shape[-1])
    return torch.logsumexp(scores, dim=-1), torch.softmax(scores, dim=-1) @ V
""",
    ),
    "partial_softmax_over_queries": (
        "recursive_attention",
        "attention_partial",
        """
def attention_partial(q, K, V):
    if K.shape[0] == 0:
        return torch.full(q.shape[:-1], -math.inf, dtype=q.dtype), \
torch.zeros(*q.shape[:-1], V.shape[-1], dtype=V.dtype)
    scores = q @ K.T / math.sqrt(q.shape[-1])
    return torch.logsumexp(scores, dim=-1), torch.softmax(scores, dim=0) @ V  # axis 0: right for one query only
""",
    ),
    "merge_for_one_query_only": (
        "recursive_attention",
        "merge",
        """
def merge(a, b):
    (s_a, v_a), (s_b, v_b) = a, b
    if s_a == -math.inf:
        return s_b, v_b
    if s_b == -math.inf:
        return s_a, v_a
    top = torch.maximum(s_a, s_b)
    w_a, w_b = torch.exp(s_a - top), torch.exp(s_b - top)
    return top + torch.log(w_a + w_b), (w_a * v_a + w_b * v_b) / (w_a + w_b)
""",
    ),
    "merge_softplus_of_the_difference": (
        "recursive_attention",
        "merge",
        """
def merge(a, b):
    (s_a, v_a), (s_b, v_b) = a, b
    if torch.all(torch.isinf(s_a)):
        return s_b, v_b
    if torch.all(torch.isinf(s_b)):
        return s_a, v_a
    s = s_a + torch.log1p(torch.exp(s_b - s_a))  # exp overflows when s_b is far above s_a
    return s, torch.exp(s_a - s)[..., None] * v_a + torch.exp(s_b - s)[..., None] * v_b
""",
    ),
    "io_true_division": (
        "recursive_attention",
        "attention_io",
        """
def attention_io(N, d, M):
    block = M / (4 * d)  # a fraction of a row counts as room
    if block < 1:
        raise ValueError("M < 4d")
    return 4 * N * d + 4 * N * N, 2 * N * d + 3 * N * d * math.ceil(N / block)
""",
    ),
}


@pytest.fixture(scope="module")
def solution_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("mistakes")
    return {a: release(a, root, solutions=True) for a in {a for a, _, _ in MISTAKES.values()}}


def _charged(folder, assignment: str, exercise: str, source: str) -> float:
    """The points the grader takes from ``exercise`` for the notebook with this cell (graded in-process)."""
    nb = Notebook(folder, assignment, {exercise: source})
    cells = [(i, c.source) for i, c in enumerate(nb.nb.cells) if c.cell_type == "code" and not is_test_cell(c)]
    target = get_assignment(assignment)
    student, _ = InProcess.from_cells(cells, target.modules)
    graded = [e.id for e in target.exercises if e.kind == "function"]
    result = judge_exercise(target.exercise(exercise), student, others=graded)
    return result.max_score - result.score


@pytest.mark.parametrize("name", list(MISTAKES))
def test_the_grader_charges_it_and_the_self_check_now_fails(name, solution_folders):
    assignment, exercise, source = MISTAKES[name]
    folder = solution_folders[assignment]
    assert _charged(folder, assignment, exercise, source) > 0, f"{name}: the grader does not charge it"
    nb = Notebook(folder, assignment, {exercise: source}).define()
    nb.selfcheck._SETTINGS = settings(nb.selfcheck._SETTINGS, phases=(Phase.explicit, Phase.reuse, Phase.generate))
    with pytest.raises(AssertionError) as failed:
        nb.run(nb.self_checks()[f"selfcheck_{exercise}"])
    assert type(failed.value).__name__ == "SelfCheckFailed", failed.value
