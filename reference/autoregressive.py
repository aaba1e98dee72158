"""Autoregressive (AR) models of a 1-D sequence.

An AR model of order ``s`` predicts each value from the ``s`` values before it:
``x(t) ~ w_0 x(t-s) + ... + w_{s-1} x(t-1) + b``. Fitting it is ordinary least squares once the
sequence is cut into overlapping windows, which is what :func:`seq2col` does.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["seq2col", "ar_fit"]


def _as_sequence(seq) -> np.ndarray:
    """Return ``seq`` as a 1-D numeric ndarray, raising ValueError that names what is wrong."""
    arr = np.asarray(seq)
    if arr.ndim != 1:
        raise ValueError(f"seq must be 1-D (a list, tuple or 1-D array); got an array of shape {arr.shape}")
    if arr.dtype.kind not in "biufc":
        raise ValueError(f"seq must hold numbers; got dtype {arr.dtype}")
    return arr


def _check_filter_size(filter_size, n: int) -> int:
    if isinstance(filter_size, bool) or not isinstance(filter_size, numbers.Integral):
        raise TypeError(f"filter_size must be an int; got {filter_size!r} of type {type(filter_size).__name__}")
    s = int(filter_size)
    if not 1 <= s < n:
        raise ValueError(f"filter_size must satisfy 1 <= filter_size < len(seq); got filter_size={s}, len(seq)={n}")
    return s


def seq2col(seq, filter_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Cut ``seq`` into windows of ``filter_size`` values and the value that follows each window.

    Returns ``(X, y)`` with ``X[i] = seq[i : i + s]`` (oldest value first) and ``y[i] = seq[i + s]``,
    so ``X`` has shape ``(n - s, s)`` and ``y`` shape ``(n - s,)``, both with the dtype of
    ``np.asarray(seq)``. The input is never modified and the outputs never alias it.
    """
    arr = _as_sequence(seq)
    n = arr.shape[0]
    s = _check_filter_size(filter_size, n)
    rows = np.arange(n - s)[:, None] + np.arange(s)[None, :]  # (n-s, s) indices into arr
    X = arr[rows]  # (n-s, s); fancy indexing copies
    y = arr[s:].copy()  # (n-s,)
    return X, y


def ar_fit(seq, filter_size: int) -> np.ndarray:
    """Least-squares AR coefficients ``w`` of shape ``(s + 1,)``; the last entry is the bias.

    ``w`` minimises ``||[X, 1] w - y||`` for ``(X, y) = seq2col(seq, s)``; among all minimisers it is
    the one of smallest norm (the pseudo-inverse solution), so it is unique even when the windows are
    linearly dependent, as they are for the Fibonacci numbers.
    """
    X, y = seq2col(seq, filter_size)
    A = np.hstack([X.astype(np.float64), np.ones((X.shape[0], 1))])  # (n-s, s+1): windows and a bias column
    return np.linalg.pinv(A) @ y.astype(np.float64)  # (s+1,)
