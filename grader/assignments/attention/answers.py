"""Checks for the attention assignment's answer variables. Messages never reveal the key."""

from __future__ import annotations

import numpy as np
import torch

from grader.checking.answers import answer
from grader.checking.base import CheckFailed
from grader.checking.compare import describe
from reference import transformer as ref


def check_answer_equivariant_with_positions(student):
    """EQUIVARIANT_WITH_POSITIONS says whether X -> self_attention(X + P) is still permutation equivariant.

    Always judged."""
    value = answer(student, "EQUIVARIANT_WITH_POSITIONS")
    if type(value) is not bool:
        raise CheckFailed(
            f"EQUIVARIANT_WITH_POSITIONS should be True or False (a bool); got {describe(value)}", kind="type"
        )
    if value != ref.SELF_ATTENTION_WITH_POSITIONS_IS_EQUIVARIANT:
        raise CheckFailed(
            f"EQUIVARIANT_WITH_POSITIONS = {value} is not right. Reorder the rows of X but not of P: "
            f"does the input at each position stay the same up to the reordering?"
        )


def _vector(value):
    """The answer as a float64 vector, or None when it is not a flat list of numbers."""
    if isinstance(value, torch.Tensor):
        value = value.detach().numpy()
    if isinstance(value, (list, tuple)) and not all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in value
    ):
        return None  # strings, complex numbers, nested lists are not numbers of the answer
    if isinstance(value, np.ndarray) and value.dtype.kind not in "iuf":
        return None
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return arr if arr.ndim == 1 else None


def check_answer_swap_poll_output(student):
    """SWAP_POLL_OUTPUT is x4's output after x2 and x3 swap places, in the lecture's poll.

    Always judged."""
    value = answer(student, "SWAP_POLL_OUTPUT")
    got = _vector(value)
    want = ref.SWAP_POLL_OUTPUT.numpy()
    if got is None or got.shape != want.shape:
        raise CheckFailed(
            f"SWAP_POLL_OUTPUT should be {want.shape[0]} numbers (a list, array or 1-D tensor); got {describe(value)}",
            kind="type" if got is None else "shape",
        )
    if not np.allclose(got, want, rtol=1e-6, atol=1e-6):
        raise CheckFailed(
            f"SWAP_POLL_OUTPUT = {describe(value)} is not right. The weights come from comparing x4's "
            f"query with each key: when x2 and x3 swap places, which weight does each of them get?"
        )
