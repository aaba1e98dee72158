"""Partial attention states, shared by the attention_partial and merge checks: how they are drawn and compared.

A state ``(s, v)`` of a query over a key set holds the log-sum-exp ``s`` of the scaled scores and the
softmax-weighted values ``v`` over that set alone. The inputs are drawn by hypothesis; the states given
to ``merge`` are made by the reference from drawn keys, so a wrong ``attention_partial`` costs nothing here.
"""

from __future__ import annotations

import torch

from grader.checking.base import CheckFailed, diagnose, fail_if
from grader.checking.compare import compare_arrays, describe, kind_of
from grader.checking.strategies import gaussian, st

TOL = {"rtol": 1e-6, "atol": 1e-9}


@st.composite
def partial_dims(draw, *, min_keys: int = 1, max_keys: int = 7):
    """Sizes for one partial state: queries (0 means a single query of shape (d,)), keys, widths, a seed."""
    return {
        "Nq": draw(st.integers(0, 3)),
        "Nk": draw(st.integers(min_keys, max_keys)),
        "d": draw(st.integers(1, 5)),
        "dv": draw(st.integers(1, 4)),
        "seed": draw(st.integers(0, 2**16)),
    }


def partial_inputs(dims: dict, *, scale: float = 1.0) -> list[torch.Tensor]:
    """``[q, K, V]`` in float64; ``scale`` multiplies q (1e4-sized scores for the stability checks)."""
    seed, d = dims["seed"], dims["d"]
    q = gaussian(seed, *((dims["Nq"], d) if dims["Nq"] else (d,))) * scale
    return [q, gaussian(seed + 1, dims["Nk"], d), gaussian(seed + 2, dims["Nk"], dims["dv"])]


def _state(got, context, want):
    """The student's (s, v), checked to be two tensors shaped like ``want``'s (else CheckFailed)."""
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise CheckFailed(f"{context}: should return a pair (s, v); got {describe(got)}", kind="type")
    for name, g, w in zip(("s", "v"), got, want):
        if kind_of(g) != "tensor":
            raise CheckFailed(f"{context}: {name} should be a torch tensor; got {describe(g)}", kind="type")
        if tuple(g.shape) != tuple(w.shape):
            raise CheckFailed(
                f"{context}: {name} should have shape {tuple(w.shape)}; got {tuple(g.shape)}", kind="shape"
            )
    return got


def compare_state(got, want, context, *, mistakes=(), hint: str | None = None) -> None:
    """Fail unless ``got`` is the state ``want`` (values within TOL, the input's dtype); the hint names the
    first known mistake (``mistakes``, see diagnose) that reproduces ``got``, else ``hint``."""
    _state(got, context, want)
    for name, g, w in zip(("s", "v"), got, want):
        problem = compare_arrays(g, w, name=name, **TOL)
        if problem is not None:
            fail_if(problem, context, hint=diagnose(got, mistakes, **TOL) or hint)
