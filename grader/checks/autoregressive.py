"""Checks for seq2col and ar_fit."""
from __future__ import annotations

import numpy as np

import reference

from .. import strategies
from ..compare import compare_arrays, describe, kind_of
from .base import CheckFailed, call, expect_value_error, fail_if, for_all, format_call

SIMPLE = ([1, 2, 3, 4, 5], 2)


def _seq2col(student, seq, s):
    got = call(student, "seq2col", seq, s).value
    if not (isinstance(got, tuple) or isinstance(got, list)) or len(got) != 2:
        raise CheckFailed(f"{format_call('seq2col', (seq, s))} should return a pair (X, y); got {describe(got)}")
    return got


def check_seq2col_shapes_and_dtype(student):
    """seq2col returns ndarrays X of shape (n - s, s) and y of shape (n - s,) with the input's dtype."""

    def prop(case):
        seq, s = case
        X, y = _seq2col(student, seq, s)
        want_X, want_y = reference.seq2col(seq, s)
        context = f"for {format_call('seq2col', (seq, s))}"
        for name, got, want in (("X", X, want_X), ("y", y, want_y)):
            if kind_of(got) != "ndarray":
                raise CheckFailed(f"{context}, {name} should be a numpy ndarray but is {describe(got)}")
            if got.shape != want.shape:
                raise CheckFailed(f"{context}, {name} has shape {got.shape}; expected {want.shape}")
            if got.dtype != want.dtype:
                raise CheckFailed(f"{context}, {name} has dtype {got.dtype}; expected {want.dtype} (the dtype of np.asarray(seq))")

    for_all(strategies.sequences(), prop, examples=(SIMPLE,))


def check_seq2col_windows(student):
    """Row i of X is seq[i : i + s] (oldest first) and y[i] is seq[i + s], the value after that window."""

    def prop(case):
        seq, s = case
        X, y = _seq2col(student, seq, s)
        want_X, want_y = reference.seq2col(seq, s)
        context = f"for {format_call('seq2col', (seq, s))}"
        fail_if(compare_arrays(X, want_X, name="X", rtol=0, atol=0, kind="ndarray", check_dtype=False), context)
        fail_if(compare_arrays(y, want_y, name="y", rtol=0, atol=0, kind="ndarray", check_dtype=False), context)

    for_all(strategies.sequences(), prop, examples=(SIMPLE,))


def check_seq2col_leaves_input_unchanged(student):
    """seq2col returns its windows without modifying the array it is given."""

    def prop(case):
        seq, s = case
        reply = call(student, "seq2col", seq, s, return_args=True)
        context = format_call("seq2col", (seq, s))
        got = reply.value
        # Only a real answer earns this: a function that returns junk also leaves its input alone.
        if not isinstance(got, (tuple, list)) or len(got) != 2 or any(kind_of(v) != "ndarray" for v in got) \
                or got[0].shape != (len(seq) - s, s):
            raise CheckFailed(f"{context} should return a pair of arrays (X, y) with X of shape {(len(seq) - s, s)}; "
                              f"got {describe(got)}")
        after = reply.args_after[0] if reply.args_after else None
        if after is None or kind_of(after) != "ndarray" or after.shape != seq.shape or not np.array_equal(after, seq):
            raise CheckFailed(f"{context} changed its input to {describe(after)}")

    for_all(strategies.sequences(forms=("int_array", "float_array")), prop, max_examples=5)


def check_seq2col_rejects_bad_filter_size(student):
    """seq2col raises ValueError when filter_size is not in 1 <= filter_size < len(seq)."""
    seq = [3, 1, 4, 1]
    for s in (0, 4, 5, -1):
        expect_value_error(student, "seq2col", (seq, s), "because filter_size must satisfy 1 <= filter_size < len(seq)")


def _design(student, seq, s):
    """``([X, 1], y, source)`` from the student's own seq2col when it gives arrays of the right shapes,
    else from a correct one, so a seq2col mistake is not charged to ar_fit as well."""
    n = len(seq)
    try:
        X, y = call(student, "seq2col", seq, s).value
        if kind_of(X) == kind_of(y) == "ndarray" and X.shape == (n - s, s) and y.shape == (n - s,) \
                and X.dtype.kind in "iuf" and y.dtype.kind in "iuf":
            source = "your seq2col"
        else:
            raise ValueError
    except Exception:
        X, y = reference.seq2col(seq, s)
        source = "a correct seq2col (yours could not be used)"
    A = np.column_stack([X.astype(np.float64), np.ones(len(X))])  # (n-s, s+1)
    return A, y.astype(np.float64), source


def _ar_fit(student, seq, s):
    w = call(student, "ar_fit", seq, s).value
    context = f"{format_call('ar_fit', (seq, s))}"
    if kind_of(w) != "ndarray" or w.shape != (s + 1,) or w.dtype.kind not in "iuf":
        raise CheckFailed(f"{context} should return a float array of shape ({s + 1},) (s weights, then the bias); got {describe(w)}")
    return w.astype(np.float64), context


def check_ar_fit_least_squares(student):
    """ar_fit's weights minimise the squared error of predicting y from [X, 1] (the normal equations hold)."""

    def prop(case):
        seq, s = case
        w, context = _ar_fit(student, seq, s)
        A, y, source = _design(student, seq, s)
        best = float(np.sum((A @ (np.linalg.pinv(A) @ y) - y) ** 2))
        got = float(np.sum((A @ w - y) ** 2))
        if not got <= best + 1e-6 * max(1.0, best):
            raise CheckFailed(f"{context} returned {describe(w)} with squared error {got:.6g}; "
                              f"the least-squares fit reaches {best:.6g} (windows from {source})")

    for_all(strategies.sequences(), prop, examples=(([0, 1, 1, 2, 3, 5, 8, 13, 21, 34], 3),))


def check_ar_fit_minimum_norm(student):
    """Among all least-squares weights, ar_fit returns the one of smallest norm (as np.linalg.pinv gives)."""

    def prop(case):
        seq, s = case
        w, context = _ar_fit(student, seq, s)
        A, y, source = _design(student, seq, s)
        want = np.linalg.pinv(A) @ y  # the minimum-norm least-squares weights
        if not np.allclose(w, want, rtol=1e-6, atol=1e-6):
            raise CheckFailed(
                f"{context} returned {describe(w)} (norm {np.linalg.norm(w):.6g}); the minimum-norm least-squares "
                f"weights are {describe(want)} (norm {np.linalg.norm(want):.6g}). Rank of [X, 1]: "
                f"{np.linalg.matrix_rank(A)} of {A.shape[1]} columns (windows from {source})"
            )

    for_all(strategies.sequences(), prop, examples=(([0, 1, 1, 2, 3, 5, 8, 13, 21, 34], 3),))
