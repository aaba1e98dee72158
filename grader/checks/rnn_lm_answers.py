"""Checks for the rnn_lm assignment's answer variables. Messages never reveal the key."""
from __future__ import annotations

from reference import rnn_lm

from ..compare import describe
from .answers import _answer
from .attention import whole_number
from .base import CheckFailed


def check_answer_teacher_forcing_parallel(student):
    """TEACHER_FORCING_PARALLEL names the statement about teacher forcing and parallel training that is true."""
    value = _answer(student, "TEACHER_FORCING_PARALLEL")
    if not isinstance(value, str) or value.strip().upper() not in ("A", "B", "C", "D"):
        raise CheckFailed(f"TEACHER_FORCING_PARALLEL should be one of the strings 'A', 'B', 'C' or 'D'; "
                          f"got {describe(value)}")
    if value.strip().upper() != rnn_lm.TEACHER_FORCING_PARALLEL:
        raise CheckFailed(f"TEACHER_FORCING_PARALLEL = {value!r} is not right. With the true previous tokens given, "
                          f"what does an RNN still need before it can compute h_t, and does masked self-attention "
                          f"need anything like it?")


def check_answer_lstm_param_count(student):
    """LSTM_PARAM_COUNT is the number of parameters of torch.nn.LSTM(10, 20)."""
    value = whole_number(_answer(student, "LSTM_PARAM_COUNT"), "LSTM_PARAM_COUNT")
    if value != rnn_lm.LSTM_PARAM_COUNT:
        raise CheckFailed(f"LSTM_PARAM_COUNT = {value} is not right. Count, for each of the four gates, the weights on "
                          f"the input, the weights on the hidden state, and the biases torch.nn.LSTM keeps.")
