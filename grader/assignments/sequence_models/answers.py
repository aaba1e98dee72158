"""Checks for the conceptual questions, answered as variables. Messages never reveal the key."""

from __future__ import annotations

from grader.checking.answers import answer, check_letter, whole_number
from grader.checking.base import CheckFailed
from grader.checking.compare import describe
from reference import answers


def check_answer_causal_mask_choice(student):
    """CAUSAL_MASK_CHOICE names the matrix that is the additive causal mask.

    Always judged."""
    check_letter(
        student,
        "CAUSAL_MASK_CHOICE",
        "ABC",
        answers.CAUSAL_MASK_CHOICE,
        "Row i holds query i and column j key j: which entries must be -inf so that no query sees a "
        "later key, and none other?",
        verdict="is not the causal mask",
    )


def check_answer_self_attention_is_causal(student):
    """SELF_ATTENTION_IS_CAUSAL is the bool that says whether unmasked self-attention is causal.

    Always judged."""
    value = answer(student, "SELF_ATTENTION_IS_CAUSAL")
    if type(value) is not bool:
        raise CheckFailed(f"SELF_ATTENTION_IS_CAUSAL should be True or False (a bool); got {describe(value)}")
    if value != answers.SELF_ATTENTION_IS_CAUSAL:
        raise CheckFailed(
            f"SELF_ATTENTION_IS_CAUSAL = {value} is not right. Without a mask, which keys can the "
            f"first query attend to?"
        )


def check_answer_qkv_param_count(student):
    """QKV_PARAM_COUNT is the number of parameters of W_q, W_k, W_v for d_model = 10, T = 4.

    Always judged."""
    value = whole_number(answer(student, "QKV_PARAM_COUNT"), "QKV_PARAM_COUNT")
    if value != answers.QKV_PARAM_COUNT:
        raise CheckFailed(
            f"QKV_PARAM_COUNT = {value} is not right. How many numbers does one d_model x d_model "
            f"matrix hold, and does the sequence length change that?"
        )
