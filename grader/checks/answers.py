"""Checks for the conceptual questions, answered as variables. Messages never reveal the key."""
from __future__ import annotations

from reference import answers

from ..calls import StudentMissing
from ..compare import describe
from .attention import whole_number
from .base import CheckFailed


def _answer(student, name):
    if not student.defines(name):
        raise StudentMissing(name, "assign your answer to this variable")
    return student.get(name)


def check_answer_causal_mask_choice(student):
    """CAUSAL_MASK_CHOICE names the matrix that is the additive causal mask."""
    value = _answer(student, "CAUSAL_MASK_CHOICE")
    if not isinstance(value, str) or value.strip().upper() not in ("A", "B", "C"):
        raise CheckFailed(f"CAUSAL_MASK_CHOICE should be one of the strings 'A', 'B' or 'C'; got {describe(value)}")
    if value.strip().upper() != answers.CAUSAL_MASK_CHOICE:
        raise CheckFailed(f"CAUSAL_MASK_CHOICE = {value!r} is not the causal mask. Row i holds query i and column j "
                          f"key j: which entries must be -inf so that no query sees a later key, and none other?")


def check_answer_self_attention_is_causal(student):
    """SELF_ATTENTION_IS_CAUSAL is the bool that says whether unmasked self-attention is causal."""
    value = _answer(student, "SELF_ATTENTION_IS_CAUSAL")
    if type(value) is not bool:
        raise CheckFailed(f"SELF_ATTENTION_IS_CAUSAL should be True or False (a bool); got {describe(value)}")
    if value != answers.SELF_ATTENTION_IS_CAUSAL:
        raise CheckFailed(f"SELF_ATTENTION_IS_CAUSAL = {value} is not right. Without a mask, which keys can the "
                          f"first query attend to?")


def check_answer_qkv_param_count(student):
    """QKV_PARAM_COUNT is the number of parameters of W_q, W_k, W_v for d_model = 10, T = 4."""
    value = whole_number(_answer(student, "QKV_PARAM_COUNT"), "QKV_PARAM_COUNT")
    if value != answers.QKV_PARAM_COUNT:
        raise CheckFailed(f"QKV_PARAM_COUNT = {value} is not right. How many numbers does one d_model x d_model "
                          f"matrix hold, and does the sequence length change that?")
