"""Checks for self_attention and sinusoidal_positions (the ``attention`` assignment).

``self_attention`` is graded with the reference ``scaled_dot_product_attention`` as a stand-in; its
permutation equivariance and its single-sequence form are judged on the student's own function.
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from grader.checking.base import CheckFailed
from grader.checking.compare import describe, kind_of
from grader.checking.gate import Probe
from grader.checking.positions import Permutation, expect_tensor, over_positions, permutation_equivariance
from grader.checking.strategies import gaussian, st
from grader.checking.templates import Values, check, form, single_example, values
from reference import transformer as ref

# --- self_attention --------------------------------------------------------------------------------------

SELF = "self_attention"


def self_attention_inputs(case) -> list:
    """``[X, Wq, Wk, Wv]`` for ``(batched, N, D, dk, dv, seed)``."""
    batched, N, D, dk, dv, seed = case
    X = gaussian(seed, *((2,) if batched else ()), N, D)
    return [X, gaussian(seed + 1, D, dk), gaussian(seed + 2, D, dk), gaussian(seed + 3, D, dv)]


def self_attention_cases(*, min_n: int = 1):
    return st.tuples(
        st.booleans(),
        st.integers(min_n, 4),
        st.integers(1, 3),
        st.integers(1, 3),
        st.integers(1, 3),
        st.integers(0, 2**16),
    )


SELF_SMALL = (True, 3, 2, 2, 2, 0)


PROBE_SELF_ATTENTION = Probe(
    SELF, self_attention_cases(), self_attention_inputs, ref.self_attention, {0: "X", 1: "Wq", 2: "Wk", 3: "Wv"}
)


def _self_attention_mistakes(X, Wq, Wk, Wv):
    return [
        (
            lambda: torch.softmax((X @ Wq) @ (X @ Wk).transpose(-2, -1), -1) @ (X @ Wv),
            "The scores are not scaled: divide by sqrt(dk), dk = Wq.shape[1].",
        ),
        (
            lambda: torch.softmax((X @ Wq) @ (X @ Wk).transpose(-2, -1) / math.sqrt(X.shape[-1]), -1) @ (X @ Wv),
            "Scale by sqrt(dk) = sqrt(Wq.shape[1]), the width of the queries, not by sqrt(D).",
        ),
    ]


check_self_attention_values = check(
    values,
    "check_self_attention_values",
    """self_attention(X, Wq, Wk, Wv) = softmax(X Wq (X Wk)^T / sqrt(dk)) X Wv, for X of shape (N, D) or (B, N, D).

    Always judged.""",
    spec=Values(
        SELF,
        self_attention_cases,
        self_attention_inputs,
        ref.self_attention,
        max_examples=6,
        examples=(SELF_SMALL,),
        mistakes=_self_attention_mistakes,
    ),
)


check_self_attention_permutation_equivariance = check(
    permutation_equivariance,
    "check_self_attention_permutation_equivariance",
    """Reordering the positions of X reorders the rows of self_attention's result the same way: F(PX) = P F(X).

    Not judged when the result is not a tensor shaped like X with Wv's width, or when no output position ever
    changes as another position's input changes (nothing is mixed, so nothing can be reordered).""",
    spec=Permutation(
        SELF,
        lambda: self_attention_cases(min_n=2),
        lambda case: self_attention_inputs((False, *case[1:])),  # one sequence (N, D): batching apart
        lambda case: case[-1],
        max_examples=3,
        examples=(SELF_SMALL,),
        form=lambda value, args, context: expect_tensor(value, (*args[0].shape[:-1], args[3].shape[1]), context),
        **over_positions(SELF, "positions of X"),
    ),
)


check_self_attention_single_sequence = check(
    single_example,
    "check_self_attention_single_sequence",
    """self_attention on one sequence X of shape (N, D) gives that sequence's row of the batched result.

    Not judged when the batched result is not a tensor with one row per sequence (see the values check).""",
    function=SELF,
    cases=self_attention_cases,
    inputs=lambda case: self_attention_inputs((True, *case[1:])),
    single=lambda args, b: [args[0][b], *args[1:]],
    rows=lambda case: (0, 1),
    max_examples=3,
    examples=(SELF_SMALL,),
)


# --- sinusoidal_positions --------------------------------------------------------------------------------

POS = "sinusoidal_positions"


def _positions_cases(max_len: int = 12):
    return st.tuples(st.integers(1, max_len), st.integers(1, 4).map(lambda h: 2 * h))


PROBE_SINUSOIDAL_POSITIONS = Probe(
    POS, _positions_cases(), list, ref.sinusoidal_positions, {0: "T", 1: "d"}, move={1: lambda d, args: d + 2}
)


def _positions_form(got, args, context):
    """A torch tensor of shape (T, d) in torch's default dtype, else CheckFailed."""
    T, d = args
    want = torch.get_default_dtype()
    if kind_of(got) != "tensor":
        raise CheckFailed(f"{context} should be a torch tensor; got {describe(got)}", kind="type")
    if tuple(got.shape) != (T, d):
        raise CheckFailed(f"{context} has shape {tuple(got.shape)}; expected ({T}, {d})", kind="shape")
    if got.dtype != want:
        raise CheckFailed(f"{context} has dtype {got.dtype}; expected torch's default dtype {want}", kind="dtype")
    return got


def _position_mistakes(T, d):
    t = torch.arange(T, dtype=torch.float64)[:, None]  # (T, 1)
    i = torch.arange(0, d, 2, dtype=torch.float64)  # (d/2,): the even column indices 2i
    j = torch.arange(d, dtype=torch.float64)  # (d,)

    def table(even, odd, rate, start=0.0):
        P = torch.empty(T, d, dtype=torch.float64)
        P[:, 0::2], P[:, 1::2] = even((t + start) * rate), odd((t + start) * rate)
        return P

    return [
        (
            lambda: table(torch.cos, torch.sin, 10000.0 ** (-i / d)),
            "sin and cos are swapped: even columns 2i hold sin, odd columns 2i+1 hold cos.",
        ),
        (
            lambda: table(torch.sin, torch.cos, 10000.0 ** (-2 * i / d)),
            "The exponent is 2i/d where 2i is the even column index itself: columns 2i and 2i+1 share the frequency "
            "1/10000^(2i/d) (torch.arange(0, d, 2) / d).",
        ),
        (
            lambda: torch.where(
                j.remainder(2) == 0, torch.sin(t / 10000.0 ** (j / d)), torch.cos(t / 10000.0 ** (j / d))
            ),
            "Columns 2i and 2i+1 share one frequency, 1/10000^(2i/d); column 2i+1 must not get a frequency of its own.",
        ),
        (lambda: table(torch.sin, torch.cos, 10000.0 ** (i / d)), "Divide t by 10000^(2i/d); do not multiply by it."),
        (lambda: table(torch.sin, torch.cos, 10000.0 ** (-i / d), start=1.0), "Positions start at t = 0."),
    ]


POSITIONS = Values(
    POS,
    _positions_cases,
    list,
    ref.sinusoidal_positions,
    max_examples=5,
    examples=((4, 6),),
    rtol=1e-5,
    atol=1e-6,
    check_dtype=False,
    mistakes=_position_mistakes,
    show=lambda args: f"{POS}({args[0]}, {args[1]})",
)

check_sinusoidal_positions_shape_and_dtype = check(
    form,
    "check_sinusoidal_positions_shape_and_dtype",
    """sinusoidal_positions(T, d) returns a torch tensor of shape (T, d) in torch's default dtype.

    Always judged.""",
    spec=replace(POSITIONS, cases=lambda: _positions_cases(8), form=_positions_form, lead=""),
    examples=((3, 4),),
)

check_sinusoidal_positions_values = check(
    values,
    "check_sinusoidal_positions_values",
    """P[t, 2i] = sin(t / 10000^(2i/d)) and P[t, 2i+1] = cos(t / 10000^(2i/d)) for t = 0..T-1.

    Always judged.""",
    spec=POSITIONS,
)
