"""seq2col and ar_fit against numpy oracles (sliding_window_view, lstsq)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.lib.stride_tricks import sliding_window_view

from reference import ar_fit, seq2col

DTYPES = st.sampled_from([np.int64, np.int32, np.float64, np.float32])


@st.composite
def sequence_and_filter(draw):
    dtype = draw(DTYPES)
    n = draw(st.integers(2, 40))
    elements = st.integers(-1000, 1000) if np.issubdtype(dtype, np.integer) else st.floats(-1e6, 1e6, width=32)
    arr = draw(hnp.arrays(dtype, n, elements=elements))
    s = draw(st.integers(1, n - 1))
    form = draw(st.sampled_from(["array", "list", "tuple"]))
    seq = arr if form == "array" else (arr.tolist() if form == "list" else tuple(arr.tolist()))
    return seq, s


@given(sequence_and_filter())
def test_seq2col_matches_sliding_window_view(case):
    seq, s = case
    arr = np.asarray(seq)
    before = arr.copy()
    X, y = seq2col(seq, s)
    windows = sliding_window_view(arr, s)[:-1]  # every window that has a successor
    np.testing.assert_array_equal(X, windows)
    np.testing.assert_array_equal(y, arr[s:])
    assert X.shape == (len(arr) - s, s) and y.shape == (len(arr) - s,)
    assert X.dtype == arr.dtype and y.dtype == arr.dtype
    np.testing.assert_array_equal(np.asarray(seq), before)  # input untouched


def test_seq2col_outputs_do_not_alias_the_input():
    seq = np.arange(6.0)
    X, y = seq2col(seq, 2)
    X[:] = -1
    y[:] = -1
    np.testing.assert_array_equal(seq, np.arange(6.0))


@pytest.mark.parametrize(
    "seq, s, words",
    [
        ([1, 2, 3], 0, ["filter_size=0", "len(seq)=3"]),
        ([1, 2, 3], 3, ["filter_size=3", "len(seq)=3"]),
        ([1, 2, 3], -1, ["filter_size=-1"]),
        ([[1, 2], [3, 4]], 1, ["1-D", "(2, 2)"]),
        (5, 1, ["1-D", "()"]),
        (["a", "b", "c"], 1, ["numbers"]),
    ],
)
def test_seq2col_rejects_bad_input_with_a_message_naming_the_values(seq, s, words):
    with pytest.raises(ValueError) as info:
        seq2col(seq, s)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("s", [1.5, "2", True, None])
def test_seq2col_rejects_a_non_integer_filter_size(s):
    with pytest.raises(TypeError, match="filter_size must be an int"):
        seq2col([1, 2, 3, 4], s)


def test_ar_fit_fibonacci_example():
    fib = [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
    np.testing.assert_array_equal(np.round(ar_fit(fib, 3)), [0, 1, 1, 0])


@given(sequence_and_filter())
def test_ar_fit_equals_the_minimum_norm_lstsq_solution(case):
    seq, s = case
    arr = np.asarray(seq, dtype=np.float64)
    windows = sliding_window_view(arr, s)[:-1]
    A = np.column_stack([windows, np.ones(len(windows))])
    expected, *_ = np.linalg.lstsq(A, arr[s:], rcond=None)  # SVD-based: the minimum-norm minimiser
    w = ar_fit(seq, s)
    assert w.shape == (s + 1,) and w.dtype == np.float64
    scale = max(1.0, np.abs(expected).max())
    np.testing.assert_allclose(w, expected, rtol=1e-6, atol=1e-6 * scale)


def test_ar_fit_rejects_what_seq2col_rejects():
    with pytest.raises(ValueError, match="filter_size=4"):
        ar_fit([1, 2, 3, 4], 4)
