"""The pieces every check of a conceptual question shares: reading the student's answer variable, a
multiple-choice letter, a whole number. Messages never reveal the key."""

from __future__ import annotations

import numpy as np

from .base import CheckFailed
from .calls import StudentMissing
from .compare import describe


def answer(student, name):
    """The value of the student's answer variable ``name`` (StudentMissing when it is not assigned)."""
    if not student.defines(name):
        raise StudentMissing(name, "assign your answer to this variable")
    return student.get(name)


def check_letter(student, name: str, letters: str, key: str, why: str, verdict: str = "is not right") -> None:
    """A multiple-choice answer: one of ``letters`` as a string, equal to ``key``; ``why`` is the nudge
    shown for a wrong letter (it never names the right one)."""
    value = answer(student, name)
    options = ", ".join(f"'{c}'" for c in letters[:-1]) + f" or '{letters[-1]}'"
    if not isinstance(value, str) or value.strip().upper() not in tuple(letters):
        raise CheckFailed(f"{name} should be one of the strings {options}; got {describe(value)}", kind="type")
    if value.strip().upper() != key:
        raise CheckFailed(f"{name} = {value!r} {verdict}. {why}")


def whole_number(value, context: str) -> int:
    """An int answer; an integral float (288.0) counts as that int, anything else fails with a clear message."""
    if isinstance(value, (float, np.floating)) and not isinstance(value, bool) and float(value).is_integer():
        return int(value)
    if isinstance(value, bool) or not (isinstance(value, int) or isinstance(value, np.integer)):
        raise CheckFailed(f"{context} should be a whole number (an int); got {describe(value)}", kind="type")
    return int(value)
