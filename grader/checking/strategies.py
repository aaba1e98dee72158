"""Hypothesis strategies for the inputs of the sequence_models exercises, named as nouns.

Shapes are drawn (and shrink towards the smallest) with hypothesis; the numbers inside tensors come
from a drawn seed, so they are continuous and never tie exactly (a ReLU's kink at 0 would otherwise
make correct but differently written gradients disagree). Sequences for seq2col/ar_fit are drawn
value by value, so a failure shrinks to a short sequence of small integers a student can read.
"""

from __future__ import annotations

import functools
import importlib
import sys
from dataclasses import dataclass

import numpy as np
import torch

_UNSET = object()


class Later:
    """A hypothesis expression evaluated when first needed (``st.integers(1, 4).map(f)`` is one).

    Importing hypothesis costs about 0.2 s, and a process that replays stored cases (checks.drawn) on a
    notebook that passes never needs it; strategies are written as usual against ``st`` below. Once
    hypothesis is imported, new expressions are built at once (inside a composite strategy, ``draw``
    needs real strategies)."""

    __slots__ = ("_make", "_value")

    def __init__(self, make):
        self._make, self._value = make, _UNSET

    def __getattr__(self, name: str):
        if _loaded():
            return getattr(resolve(self), name)
        return Later(lambda: getattr(resolve(self), name))

    def __call__(self, *args, **kwargs):
        if _loaded():
            return resolve(self)(*resolve(args), **resolve(kwargs))
        return Later(lambda: resolve(self)(*resolve(args), **resolve(kwargs)))

    def __repr__(self) -> str:
        return "<hypothesis expression, not evaluated yet>" if self._value is _UNSET else repr(self._value)


def _loaded() -> bool:
    return "hypothesis.strategies" in sys.modules


def resolve(x):
    """``x`` with every :class:`Later` in it (in tuples, lists and dict values too) evaluated."""
    if type(x) is Later:
        if x._value is _UNSET:
            x._value, x._make = resolve(x._make()), None
        return x._value
    if type(x) in (tuple, list):
        return type(x)(resolve(v) for v in x)
    if type(x) is dict:
        return {k: resolve(v) for k, v in x.items()}
    return x


st = Later(lambda: importlib.import_module("hypothesis.strategies"))


def _bounded(name: str, lo: int, hi: int) -> None:
    if not (isinstance(lo, int) and isinstance(hi, int) and 0 <= lo <= hi):
        raise ValueError(f"{name}: need integers 0 <= min <= max; got min={lo!r}, max={hi!r}")


@st.composite
def sequences(draw, *, min_len: int = 2, max_len: int = 10, forms=("list", "int_array", "float_array", "tuple")):
    """A 1-D sequence (list, tuple or ndarray) with a valid filter size: ``(seq, s)``."""
    _bounded("sequences", min_len, max_len)
    if min_len < 2:
        raise ValueError(f"sequences: min_len must be at least 2 so that a filter size exists; got {min_len}")
    values = draw(st.lists(st.integers(-9, 9), min_size=min_len, max_size=max_len))
    s = draw(st.integers(1, len(values) - 1))
    form = draw(st.sampled_from(forms))
    if form == "int_array":
        return np.array(values, dtype=np.int64), s
    if form == "float_array":
        return np.array(values, dtype=np.float64) / 2, s
    return (values if form == "list" else tuple(values)), s


def gaussian(seed: int, *shape: int) -> torch.Tensor:
    """A float64 tensor of standard normal numbers, reproducible from ``seed`` (a new tensor at every call)."""
    return torch.from_numpy(_normal(seed, shape).copy())


@functools.lru_cache(maxsize=4096)
def _normal(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """The numbers behind ``gaussian``: the same for every notebook a process grades (the checks draw from a fixed
    set of seeds), so drawn once per process; making the generator alone costs about 10 us. Never written to."""
    numbers = np.random.default_rng(seed).standard_normal(shape)
    numbers.flags.writeable = False
    return numbers


@dataclass(frozen=True)
class Dims:
    """Named sizes of one drawn problem; ``seed`` fixes the numbers."""

    B: int
    T: int
    d_in: int
    d_h: int
    seed: int


@st.composite
def rnn_dims(draw, *, max_batch: int = 4, max_time: int = 5, max_dim: int = 4, min_batch: int = 1):
    """Sizes for a recurrent problem: batch B, length T, input and hidden widths, and a seed."""
    _bounded("rnn_dims", min_batch, max_batch)
    return Dims(
        B=draw(st.integers(min_batch, max_batch)),
        T=draw(st.integers(1, max_time)),
        d_in=draw(st.integers(1, max_dim)),
        d_h=draw(st.integers(1, max_dim)),
        seed=draw(st.integers(0, 2**16)),
    )


def rnn_step_inputs(dims: Dims, *, batched: bool = True) -> list[torch.Tensor]:
    """``[x, h_prev, Wrec, Win]`` for one step of a recurrent unit."""
    x, h = gaussian(dims.seed, dims.B, dims.d_in), gaussian(dims.seed + 1, dims.B, dims.d_h)
    if not batched:
        x, h = x[0], h[0]  # (d_in,), (d_h,)
    return [x, h, gaussian(dims.seed + 2, dims.d_h, dims.d_h) / 2, gaussian(dims.seed + 3, dims.d_h, dims.d_in)]


def rnn_sequence_inputs(dims: Dims) -> list[torch.Tensor]:
    """``[seqs (B, T, d_in), Wrec, Win, Wout (d_h, 1)]`` for a recurrent forward pass."""
    return [
        gaussian(dims.seed, dims.B, dims.T, dims.d_in),
        gaussian(dims.seed + 2, dims.d_h, dims.d_h) / 2,
        gaussian(dims.seed + 3, dims.d_h, dims.d_in),
        gaussian(dims.seed + 4, dims.d_h, 1),
    ]


@st.composite
def attention_dims(draw, *, max_batch: int = 3, max_time: int = 6, max_dim: int = 5):
    """Sizes for masked self-attention: B, T, model width d, key width d_k, value width d_v, seed."""
    return {
        "B": draw(st.integers(1, max_batch)),
        "T": draw(st.integers(1, max_time)),
        "d": draw(st.integers(1, max_dim)),
        "d_k": draw(st.integers(1, max_dim)),
        "d_v": draw(st.integers(1, max_dim)),
        "seed": draw(st.integers(0, 2**16)),
    }


def attention_inputs(dims: dict, *, batched: bool = True) -> list[torch.Tensor]:
    """``[X, Wq, Wk, Wv]`` for masked self-attention."""
    seed = dims["seed"]
    X = gaussian(seed, dims["B"], dims["T"], dims["d"])
    if not batched:
        X = X[0]  # (T, d)
    return [
        X,
        gaussian(seed + 1, dims["d"], dims["d_k"]),
        gaussian(seed + 2, dims["d"], dims["d_k"]),
        gaussian(seed + 3, dims["d"], dims["d_v"]),
    ]


def ar_coefficients(*, max_order: int = 5):
    """AR weights ``w`` of order ``s`` (1 to ``max_order``), oldest input first as ``ar_fit`` returns them
    (``w[-1]`` multiplies the newest), as a float64 array of a few simple values."""
    return st.lists(st.sampled_from([1.0, -1.0, 0.5, 2.0, 0.0, -0.25]), min_size=1, max_size=max_order).map(
        lambda w: np.array(w, dtype=np.float64)
    )


def heads_and_widths(*, max_heads: int = 8, max_head_dim: int = 16):
    """``(d_model, n_heads)`` with ``n_heads`` dividing ``d_model``."""
    return st.tuples(st.integers(1, max_head_dim), st.integers(1, max_heads)).map(lambda p: (p[0] * p[1], p[1]))
