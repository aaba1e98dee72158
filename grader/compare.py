"""Comparisons that explain themselves: each returns None when values agree, else a message for students."""
from __future__ import annotations

import numpy as np
import torch

from .codec import Unsupported


def describe(value, limit: int = 16) -> str:
    """A short, readable rendering of a value as a student would write it."""
    if isinstance(value, torch.Tensor):
        data = value.detach().numpy()
        body = np.array2string(data, precision=4, separator=", ", threshold=limit) if data.size <= limit else "..."
        return f"tensor {body} (shape {tuple(data.shape)}, {str(value.dtype).replace('torch.', '')})"
    if isinstance(value, np.ndarray):
        body = np.array2string(value, precision=4, separator=", ", threshold=limit) if value.size <= limit else "..."
        return f"array {body} (shape {value.shape}, {value.dtype})"
    if isinstance(value, (list, tuple)) and len(value) > limit:
        return f"{type(value).__name__} of length {len(value)}"
    if isinstance(value, Unsupported):
        return repr(value)
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


def kind_of(value) -> str:
    if isinstance(value, torch.Tensor):
        return "tensor"
    if isinstance(value, np.ndarray):
        return "ndarray"
    if isinstance(value, Unsupported):
        return value.type_name
    return type(value).__name__


def as_numpy(value) -> np.ndarray:
    return value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


def compare_arrays(got, expected, *, name: str = "the result", rtol: float = 1e-6, atol: float = 1e-8,
                   kind: str | None = None, check_dtype: bool = True) -> str | None:
    """Compare an array-like answer with the expected one: type, shape, dtype, then values.

    The message names the first thing that differs; for values it gives the number of mismatches,
    the largest absolute and relative errors, and the first mismatching index with both values.
    """
    want_kind = kind or kind_of(expected)
    if kind_of(got) != want_kind:
        return f"{name} should be a {want_kind} but is {describe(got)}"
    g, e = as_numpy(got), as_numpy(expected)
    if g.shape != e.shape:
        return f"{name} has shape {g.shape}; expected shape {e.shape}"
    got_dtype = str(got.dtype) if isinstance(got, torch.Tensor) else str(g.dtype)
    want_dtype = str(expected.dtype) if isinstance(expected, torch.Tensor) else str(e.dtype)
    if check_dtype and got_dtype != want_dtype:
        return f"{name} has dtype {got_dtype}; expected {want_dtype} (the dtype of the input)"
    if g.dtype.kind not in "biufc":
        return f"{name} holds {g.dtype} values; expected numbers"
    g64, e64 = g.astype(np.complex128 if g.dtype.kind == "c" else np.float64), e.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(g64, e64, rtol=rtol, atol=atol, equal_nan=True) | (g64 == e64)
    if close.all():
        return None
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0])
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(g64 - e64)
        finite = np.isfinite(diff)
        max_abs = float(diff[finite].max()) if finite.any() else float("inf")
        rel = diff / np.maximum(np.abs(e64), 1e-300)
        max_rel = float(rel[np.isfinite(rel)].max()) if np.isfinite(rel).any() else float("inf")
    where = f"index {first}" if first else "the value"
    return (
        f"{name}: {len(bad)} of {g.size} values differ (max abs error {max_abs:.3g}, max rel error {max_rel:.3g}, "
        f"tolerance rtol={rtol:g}, atol={atol:g}); first at {where}: expected {_scalar(e[first])}, got {_scalar(g[first])}"
    )


def _scalar(x) -> str:
    x = x.item() if hasattr(x, "item") else x
    return f"{x:.6g}" if isinstance(x, float) else repr(x)
