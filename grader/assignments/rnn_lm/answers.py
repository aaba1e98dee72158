"""Checks for the rnn_lm assignment's answer variables. Messages never reveal the key."""

from __future__ import annotations

from grader.checking.answers import answer, check_letter, whole_number
from grader.checking.base import CheckFailed
from reference import rnn_lm


def check_answer_teacher_forcing_parallel(student):
    """TEACHER_FORCING_PARALLEL names the statement about teacher forcing and parallel training that is true.

    Always judged."""
    check_letter(
        student,
        "TEACHER_FORCING_PARALLEL",
        "ABCD",
        rnn_lm.TEACHER_FORCING_PARALLEL,
        "With the true previous tokens given, what does an RNN still need before it can compute h_t, and "
        "does masked self-attention need anything like it?",
    )


def check_answer_lstm_param_count(student):
    """LSTM_PARAM_COUNT is the number of parameters of torch.nn.LSTM(10, 20).

    Always judged."""
    value = whole_number(answer(student, "LSTM_PARAM_COUNT"), "LSTM_PARAM_COUNT")
    if value != rnn_lm.LSTM_PARAM_COUNT:
        raise CheckFailed(
            f"LSTM_PARAM_COUNT = {value} is not right. Count, for each of the four gates, the weights on "
            f"the input, the weights on the hidden state, and the biases torch.nn.LSTM keeps."
        )
