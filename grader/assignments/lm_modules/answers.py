"""Checks for the lm_modules assignment's answer variables. Messages never reveal the key."""

from __future__ import annotations

from grader.checking.answers import check_letter
from reference import lm_modules


def check_answer_temperature_effect(student):
    """temperature_effect names the statement about dividing the logits by a temperature that is true.

    Always judged."""
    check_letter(
        student,
        "temperature_effect",
        "ABCD",
        lm_modules.TEMPERATURE_EFFECT,
        "Work out softmax(logits / T) for logits (2, 0) at T = 0.5, 1 and 4: which token is most likely "
        "at each, and how far is the distribution from uniform?",
    )


def check_answer_why_sample(student):
    """why_sample names the reason for sampling the next token rather than always taking the most likely one.

    Always judged."""
    check_letter(
        student,
        "why_sample",
        "ABCD",
        lm_modules.WHY_SAMPLE,
        "Run greedy decoding twice from the same prefix: what comes out the second time? And does taking "
        "the most likely token at every step give the most likely whole sequence?",
    )
