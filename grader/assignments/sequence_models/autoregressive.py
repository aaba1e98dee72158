"""Checks for seq2col and ar_fit."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import reference
from grader.checking import strategies
from grader.checking.base import (
    CheckFailed,
    Lazy,
    NotJudged,
    call,
    diagnose,
    expect_value_error,
    fail_if,
    for_all,
    format_call,
)
from grader.checking.compare import compare_arrays, describe, kind_of
from grader.checking.gate import Probe
from grader.checking.templates import Values, check, form, values

SIMPLE = ([1, 2, 3, 4, 5], 2)


def _pair(got, args, context):
    """seq2col's (X, y) as returned, if it is a pair (else CheckFailed of kind type)."""
    if not (isinstance(got, tuple) or isinstance(got, list)) or len(got) != 2:
        raise CheckFailed(
            f"{format_call('seq2col', args)} should return a pair (X, y); got {describe(got)}", kind="type"
        )
    return got


def _typed_pair(got, args, context):
    """The pair (X, y), each an ndarray of the reference's shape and dtype (else CheckFailed)."""
    X, y = _pair(got, args, context)
    want_X, want_y = reference.seq2col(*args)
    for name, part, want in (("X", X, want_X), ("y", y, want_y)):
        if kind_of(part) != "ndarray":
            raise CheckFailed(f"{context}, {name} should be a numpy ndarray but is {describe(part)}", kind="type")
        if part.shape != want.shape:
            raise CheckFailed(f"{context}, {name} has shape {part.shape}; expected {want.shape}", kind="shape")
        if part.dtype != want.dtype:
            raise CheckFailed(
                f"{context}, {name} has dtype {part.dtype}; expected {want.dtype} (the dtype of np.asarray(seq))",
                kind="dtype",
            )
    return got


def _window_mistakes(seq, s) -> dict:
    """The known mistakes of each part, X and y: (compute, hint) pairs (see diagnose)."""
    want_X, arr = reference.seq2col(seq, s)[0], np.asarray(seq)
    return {
        "X": ((lambda: want_X[:, ::-1], "Each row should be oldest first: X[i] = seq[i : i + s], not reversed."),),
        "y": (
            (lambda: arr[s - 1 : -1], "y[i] is the value right after window i, seq[i + s]: it is shifted by one."),
            (
                lambda: arr[: len(arr) - s],
                "y[i] is the value after window i (seq[i + s]), not the window's first value.",
            ),
        ),
    }


def _same_window(got, want, args, context, name) -> None:
    """One part, X or y, equals the reference's exactly (whatever its dtype), with a hint for a known mistake."""
    fail_if(
        compare_arrays(got, want, name=name, rtol=0, atol=0, kind="ndarray", check_dtype=False),
        context,
        hint=diagnose(got, _window_mistakes(*args)[name], rtol=0, atol=0),
    )


SEQ2COL = Values(
    "seq2col",
    strategies.sequences,
    list,
    reference.seq2col,
    examples=(SIMPLE,),
    form=_pair,
    parts=(("X", 0), ("y", 1)),
    compare=_same_window,
)

check_seq2col_shapes_and_dtype = check(
    form,
    "check_seq2col_shapes_and_dtype",
    """seq2col returns ndarrays X of shape (n - s, s) and y of shape (n - s,) with the input's dtype.

    Always judged.""",
    spec=replace(SEQ2COL, form=_typed_pair),
    max_examples=12,
)

check_seq2col_windows = check(
    values,
    "check_seq2col_windows",
    """Row i of X is seq[i : i + s] (oldest first) and y[i] is seq[i + s], the value after that window.

    Always judged.""",
    spec=SEQ2COL,
)


def check_seq2col_leaves_input_unchanged(student):
    """seq2col leaves the array it is given unchanged: a second call on the same array returns what the first did.

    Not judged when seq2col does not return a pair (X, y) (the shapes check charges that)."""

    def prop(case):
        seq, s = case
        reply = call(student, "seq2col", seq, s, again=True)
        context = Lazy(lambda: format_call("seq2col", (seq, s)))
        first, again = reply.value, reply.again
        pairs = [v for v in (first, again) if isinstance(v, (tuple, list)) and len(v) == 2]
        if len(pairs) < 2:
            raise NotJudged(
                f"{context} returned {describe(first)}, not a pair (X, y) (see the shapes check)", kind="not_judged"
            )
        for name, a, b in (("X", first[0], again[0]), ("y", first[1], again[1])):
            if compare_arrays(np.asarray(b), np.asarray(a), rtol=0, atol=0, check_dtype=False) is not None:
                raise CheckFailed(
                    f"{context}: the first call returned {name} = {describe(a)}, but a second call on the "
                    f"same array returned {describe(b)}: the first call changed the array it was given"
                )

    for_all(strategies.sequences(forms=("int_array", "float_array")), prop, max_examples=5)


def _smaller_filter(s, args):
    return s - 1 if s > 1 else s + 1


PROBE_SEQ2COL = Probe(
    "seq2col", strategies.sequences(), list, reference.seq2col, {0: "seq", 1: "filter_size"}, move={1: _smaller_filter}
)


def check_seq2col_rejects_bad_filter_size(student):
    """seq2col raises ValueError when filter_size is not in 1 <= filter_size < len(seq).

    Always judged (it pays only for a function that does real work on valid inputs)."""
    seq = [3, 1, 4, 1]
    for s in (0, 4, 5, -1):
        expect_value_error(student, "seq2col", (seq, s), "because filter_size must satisfy 1 <= filter_size < len(seq)")


def _design(seq, s):
    """``([X, 1], y)`` from a correct seq2col: ar_fit is judged on its own, whatever the student's seq2col does."""
    X, y = reference.seq2col(seq, s)
    A = np.column_stack([X.astype(np.float64), np.ones(len(X))])  # (n-s, s+1)
    return A, y.astype(np.float64)


def _weights(w, args, context) -> np.ndarray:
    """ar_fit's result as float64 weights, if it is a float array of shape (s + 1,) (else CheckFailed)."""
    s = args[1]
    if kind_of(w) != "ndarray" or w.shape != (s + 1,) or w.dtype.kind not in "iuf":
        raise CheckFailed(
            f"{context} should return a float array of shape ({s + 1},) (s weights, then the bias); got {describe(w)}",
            kind="type" if kind_of(w) != "ndarray" else "shape",
        )
    return w.astype(np.float64)


# What least squares computes carries rounding errors (1e-15 in a weight that is 0, 1e-27 in an exact fit's squared
# error) whose digits depend on the machine's BLAS kernels, not on the answer: a message shows them as 0.
ROUNDING = 1e-9


def _rounded(w: np.ndarray) -> np.ndarray:
    """``w`` with the weights that are rounding errors next to its largest made 0 (and no -0)."""
    return np.where(np.abs(w) <= ROUNDING * max(1.0, float(np.abs(w).max(initial=0.0))), 0.0, w) + 0.0


def _squared_error(error: float, y: np.ndarray) -> str:
    return "0 (up to rounding)" if error <= ROUNDING * max(1.0, float(y @ y)) else f"{error:.6g}"


def _least_squares(w, design, args, context, name) -> None:
    A, y = design
    best = float(np.sum((A @ (np.linalg.pinv(A) @ y) - y) ** 2))
    got = float(np.sum((A @ w - y) ** 2))
    if not got <= best + 1e-6 * max(1.0, best):
        raise CheckFailed(
            f"{context} returned {describe(_rounded(w))} with squared error {_squared_error(got, y)}; the "
            f"least-squares fit reaches {_squared_error(best, y)}"
        )


def _minimum_norm(w, design, args, context, name) -> None:
    A, y = design
    want = np.linalg.pinv(A) @ y  # the minimum-norm least-squares weights
    if not np.allclose(w, want, rtol=1e-6, atol=1e-6):
        raise CheckFailed(
            f"{context} returned {describe(_rounded(w))} (norm {np.linalg.norm(w):.6g}); the minimum-norm "
            f"least-squares weights are {describe(_rounded(want))} (norm {np.linalg.norm(want):.6g}). Rank of "
            f"[X, 1]: {np.linalg.matrix_rank(A)} of {A.shape[1]} columns"
        )


# The weights are judged against the least-squares problem itself (the design [X, 1], y), not one answer.
AR_FIT = Values(
    "ar_fit",
    strategies.sequences,
    list,
    _design,
    examples=(([0, 1, 1, 2, 3, 5, 8, 13, 21, 34], 3),),
    form=_weights,
    lead="",
)

check_ar_fit_least_squares = check(
    values,
    "check_ar_fit_least_squares",
    """ar_fit's weights minimise the squared error of predicting y from [X, 1] (the normal equations hold).

    Always judged.""",
    spec=replace(AR_FIT, compare=_least_squares),
)

check_ar_fit_minimum_norm = check(
    values,
    "check_ar_fit_minimum_norm",
    """Among all least-squares weights, ar_fit returns the one of smallest norm (as np.linalg.pinv gives).

    Always judged.""",
    spec=replace(AR_FIT, compare=_minimum_norm),
)


PROBE_AR_FIT = Probe(
    "ar_fit", strategies.sequences(), list, reference.ar_fit, {0: "seq", 1: "filter_size"}, move={1: _smaller_filter}
)
