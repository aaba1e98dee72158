"""rnn_lm graded as a whole, beyond the check table of tests/grader/test_checks_rnn_lm.py: a check pays nothing for
what it cannot judge, a wrong function costs only its own exercise, degenerate cells earn nothing, the notebook's
solution cells are named for what they define, and replayed examples give the verdicts hypothesis gives.

Student code runs in-process (through the codec, stand-ins included), judged as in a real grade.
"""

import re

import pytest

from grader.assignments.rnn_lm.language_model import SMALL, lm_inputs
from grader.checking.standins import for_exercise
from grader.judge import judge_exercise
from grader.notebook import nbgrader_meta

from .test_checks_rnn_lm import ALL_CHECKS, NOTEBOOK, RNN_LM, WRONG, _student, judged

STATES_WITHOUT_RECURRENCE = """
def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):
    return torch.tanh(E[tokens] @ W_xh + b_h)  # no h_{t-1} W_hh: trivially causal
"""


def test_causality_pays_nothing_for_states_that_ignore_the_past():
    result = judged(_student(STATES_WITHOUT_RECURRENCE), "rnn_lm_states")["check_rnn_lm_states_causality"]
    assert result.status == "failed" and result.points == 0 and "not judged" in result.message


def test_rnn_lm_loss_is_graded_with_the_reference_states():
    """A wrong rnn_lm_states costs only its own exercise: rnn_lm_loss, which calls it, keeps full marks,
    because the grader serves the reference rnn_lm_states in its place and records the calls itself."""
    student = _student(STATES_WITHOUT_RECURRENCE)
    states = judge_exercise(RNN_LM.exercise("rnn_lm_states"), student)
    loss = judge_exercise(RNN_LM.exercise("rnn_lm_loss"), student)
    assert states.score < RNN_LM.exercise("rnn_lm_states").points
    assert loss.score == RNN_LM.exercise("rnn_lm_loss").points, [c.message for c in loss.checks]
    reply = for_exercise(student, RNN_LM.exercise("rnn_lm_loss")).call("rnn_lm_loss", lm_inputs(SMALL))
    assert [s.name for s in reply.served] == ["rnn_lm_states"]  # one call, answered by the grader


def test_a_loss_that_writes_the_recurrence_out_keeps_its_points_when_right():
    inline = """
def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):
    h, loss = torch.zeros(W_hh.shape[0], dtype=E.dtype), 0
    for t in range(len(tokens) - 1):
        h = torch.tanh(E[tokens[t]] @ W_xh + h @ W_hh + b_h)
        loss = loss - torch.log_softmax(h @ W_hy + b_y, dim=0)[tokens[t + 1]]
    return loss
"""
    assert (
        judge_exercise(RNN_LM.exercise("rnn_lm_loss"), _student(inline)).score == RNN_LM.exercise("rnn_lm_loss").points
    )


@pytest.mark.parametrize(
    "body",
    [
        "return (h, c)",
        "return (torch.zeros_like(h), torch.zeros_like(c))",
        "return (torch.ones(2, 2, dtype=torch.float64), torch.ones(2, 2, dtype=torch.float64))",
    ],
)
def test_degenerate_lstm_cells_earn_nothing(body):
    result = judge_exercise(RNN_LM.exercise("lstm_cell"), _student(f"def lstm_cell(x, h, c, W, b):\n    {body}"))
    assert result.score == 0, [(c.name, c.status) for c in result.checks]


def test_solution_cells_are_named_for_what_they_define():
    for cell in NOTEBOOK.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution") and cell.cell_type == "code":
            defined = re.findall(r"^(?:def (\w+)|(\w+) =)", cell.source, re.MULTILINE)
            assert meta["grade_id"] in {a or b for a, b in defined}, meta["grade_id"]


def test_replayed_examples_give_the_verdicts_hypothesis_gives(monkeypatch):
    """for_all replays the cases drawn once; turning that off must change no status, point or message."""
    import grader.checking.base as base

    names = [
        "check_lstm_cell_keeps_memory",
        "check_rnn_lm_states_causality",
        "check_ngram_probs_matches_counts",
        "check_causal_conv1d_causality",
    ]

    def grade_all():
        out = {name: judged(_student(WRONG[name][0]), ALL_CHECKS[name][0])[name] for name in names}
        student = _student()
        out.update({(e.id, r.name): r for e in RNN_LM.exercises for r in judge_exercise(e, student).checks})
        return out

    replayed = grade_all()
    monkeypatch.setattr(base, "REPLAY", False)
    assert grade_all() == replayed
