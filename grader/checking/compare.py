"""Comparisons that explain themselves: each returns None when values agree, else a message for students."""

from __future__ import annotations

from contextvars import ContextVar

import numpy as np
import torch

from grader.jail.codec import Unsupported

# The precision an answer was computed in, when it is coarser than its inputs' and a mechanical cast has
# been charged already (grader.checking.mechanical): comparisons with a tolerance then allow that dtype's
# rounding, since casting the answer back cannot give back the digits it lost. None: the inputs' own.
PRECISION: ContextVar[torch.dtype | None] = ContextVar("precision", default=None)

# The course's tolerance (relative, absolute) for values recomputed in float64: a property compares with it
# unless it states its own.
RTOL, ATOL = 1e-6, 1e-9


def loosened(rtol: float, atol: float, scale: float = 1.0) -> tuple[float, float]:
    """``(rtol, atol)`` widened to what :data:`PRECISION` allows for values of magnitude ``scale``."""
    coarse = PRECISION.get()
    if coarse is None or not (rtol or atol):
        return rtol, atol
    eps = 64 * torch.finfo(coarse).eps
    return max(rtol, eps), max(atol, eps * max(1.0, scale))


class Mismatch(str):
    """A message for students saying how an answer differs, with the kind of difference (``kind``):
    ``type``, ``shape``, ``dtype`` or ``values``."""

    kind = "values"

    def __new__(cls, text: str, kind: str = "values"):
        self = super().__new__(cls, text)
        self.kind = kind
        return self


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


def compare_arrays(
    got,
    expected,
    *,
    name: str = "the result",
    rtol: float = 1e-6,
    atol: float = 1e-8,
    kind: str | None = None,
    check_dtype: bool = True,
) -> str | None:
    """Compare an array-like answer with the expected one: type, shape, dtype, then values.

    The message names the first thing that differs; for values it gives the number of mismatches,
    the largest absolute and relative errors, and the first mismatching index with both values.
    """
    want_kind = kind or kind_of(expected)
    if kind_of(got) != want_kind:
        return Mismatch(f"{name} should be a {want_kind} but is {describe(got)}", "type")
    g, e = as_numpy(got), as_numpy(expected)
    if g.shape != e.shape:
        return Mismatch(f"{name} has shape {g.shape}; expected shape {e.shape}", "shape")
    got_dtype = str(got.dtype) if isinstance(got, torch.Tensor) else str(g.dtype)
    want_dtype = str(expected.dtype) if isinstance(expected, torch.Tensor) else str(e.dtype)
    if check_dtype and got_dtype != want_dtype:
        return Mismatch(f"{name} has dtype {got_dtype}; expected {want_dtype} (the dtype of the input)", "dtype")
    if g.dtype.kind not in "biufc":
        return Mismatch(f"{name} holds {g.dtype} values; expected numbers", "type")
    g64, e64 = g.astype(np.complex128 if g.dtype.kind == "c" else np.float64), e.astype(np.float64)
    finite = e64[np.isfinite(e64)]
    rtol, atol = loosened(rtol, atol, float(np.abs(finite).max()) if finite.size else 1.0)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(g64, e64, rtol=rtol, atol=atol, equal_nan=True) | (g64 == e64)
    if close.all():
        return None
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0])
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(close, 0.0, np.abs(g64 - e64))  # inf where one side is infinite, nan where one is nan
        diff = np.where(np.isnan(diff) & ~close, np.inf, diff)
        max_abs = float(diff.max())
        rel = diff / np.maximum(np.abs(e64), 1e-300)
        max_rel = float(np.nan_to_num(rel, nan=np.inf, posinf=np.inf).max())
    where = f"index {first}" if first else "the value"
    return Mismatch(
        f"{name}: {len(bad)} of {g.size} values differ (max abs error {max_abs:.3g}, max rel error {max_rel:.3g}, "
        f"tolerance rtol={rtol:g}, atol={atol:g}); first at {where}: expected {_scalar(e[first])}, "
        f"got {_scalar(g[first])}"
    )


def _scalar(x) -> str:
    x = x.item() if hasattr(x, "item") else x
    return f"{x:.6g}" if isinstance(x, float) else repr(x)


def shape_of(value) -> tuple:
    """The shape of an array or tensor; () for anything else."""
    shape = getattr(value, "shape", ())
    try:
        return tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        return ()
