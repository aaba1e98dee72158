"""Checks for scaled_dot_product_attention (the ``attention`` assignment).

``scaled_dot_product_attention(Q, K, V, mask=None)`` returns ``(Y, A)``; ``mask`` is bool with True =
may attend. Its values are compared with the reference (itself tested against
``torch.nn.functional.scaled_dot_product_attention``); the properties (rows of A are distributions over
the allowed keys, the fully masked row, query permutation equivariance, joint key/value permutation
invariance, gradients) are judged on the student's own function.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import torch

from grader.checking.base import CheckFailed, Lazy, call, fail_if, for_all, format_call
from grader.checking.compare import compare_arrays, describe, kind_of
from grader.checking.gate import Probe
from grader.checking.positions import Gate, Part, Permutation, permutation_equivariance, with_arg
from grader.checking.properties import fd_settings
from grader.checking.strategies import gaussian, st
from grader.checking.templates import Values, check, form, values
from reference import transformer as ref

NAME = "scaled_dot_product_attention"
LEADS = ((), (2,), (2, 2))
MASKS = ("none", "full", "shared", "keys")


def allowed_mask(seed: int, shape: tuple) -> torch.Tensor:
    """A bool mask (True = may attend) of ``shape`` in which every query may attend to at least one key."""
    rng = np.random.default_rng(seed)
    mask = rng.random(shape) < 0.6
    first = rng.integers(0, shape[-1], size=shape[:-1])
    np.put_along_axis(mask, first[..., None], True, axis=-1)
    return torch.from_numpy(mask)


def sdpa_inputs(case) -> list:
    """``[Q, K, V]`` or ``[Q, K, V, mask]`` for one drawn case ``(lead, Nq, Nk, dk, dv, mask_kind, seed)``."""
    lead, Nq, Nk, dk, dv, kind, seed = case
    args = [gaussian(seed, *lead, Nq, dk), gaussian(seed + 1, *lead, Nk, dk), gaussian(seed + 2, *lead, Nk, dv)]
    shape = {"full": (*lead, Nq, Nk), "shared": (Nq, Nk), "keys": (1, Nk)}.get(kind)
    return args if shape is None else args + [allowed_mask(seed + 3, shape)]


def sdpa_cases(*, masks=MASKS, max_n: int = 4):
    return st.tuples(
        st.sampled_from(LEADS),
        st.integers(1, max_n),
        st.integers(1, max_n),
        st.integers(1, 3),
        st.integers(1, 3),
        st.sampled_from(masks),
        st.integers(0, 2**16),
    )


SMALL = ((), 2, 3, 2, 2, "full", 0)
UNMASKED = ((), 2, 3, 2, 2, "none", 0)


def _pair(value, shapes, context) -> tuple:
    """The reply as ``(Y, A)``, each a tensor of its shape; raises CheckFailed (type/shape) otherwise."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise CheckFailed(
            f"{context}: the result should be a pair (Y, A) of tensors; got {describe(value)}", kind="type"
        )
    for part, got, shape in zip("YA", value, shapes):
        if kind_of(got) != "tensor":
            raise CheckFailed(f"{context}: {part} should be a torch tensor; got {describe(got)}", kind="type")
        if tuple(got.shape) != tuple(shape):
            raise CheckFailed(f"{context}: {part} has shape {tuple(got.shape)}; expected {tuple(shape)}", kind="shape")
    return value[0].detach(), value[1].detach()


def _shapes(args) -> tuple:
    Q, K, V = args[:3]
    lead = np.broadcast_shapes(tuple(Q.shape[:-2]), tuple(K.shape[:-2]))  # (torch.broadcast_shapes imports sympy)
    return (*lead, Q.shape[-2], V.shape[-1]), (*lead, Q.shape[-2], K.shape[-2])


PROBE_SDPA = Probe(
    NAME,
    sdpa_cases(),
    sdpa_inputs,
    ref.scaled_dot_product_attention,
    {0: "Q", 1: "K", 2: "V", 3: "mask"},
    count=6,
    per_output=True,
)


def _typed_pair(value, args, context) -> tuple:
    """The reply as ``(Y, A)`` (see _pair), each also in the inputs' dtype (else CheckFailed of kind dtype)."""
    Y, A = _pair(value, _shapes(args), context)
    for part, got in (("Y", Y), ("A", A)):
        if got.dtype != args[0].dtype:
            raise CheckFailed(
                f"{context}: {part} has dtype {got.dtype}; expected {args[0].dtype}, the inputs' dtype", kind="dtype"
            )
    return Y, A


def _sdpa_mistakes(Q, K, V, mask=None):
    dk = Q.shape[-1]
    scores = Q @ K.transpose(-2, -1)

    def softmax(s, dim=-1, keep=None):
        if keep is not None:
            s = s.masked_fill(~keep, float("-inf"))
        return torch.softmax(s, dim=dim).nan_to_num(0.0)  # rows with no allowed key: 0, as asked

    mistakes = [
        (lambda: softmax(scores, keep=mask), "The scores are not scaled: divide Q K^T by sqrt(dk)."),
        (lambda: softmax(scores / dk, keep=mask), "Scale the scores by 1/sqrt(dk), not 1/dk."),
        (
            lambda: softmax(scores / math.sqrt(dk), dim=-2, keep=mask),
            "The softmax runs over the queries: take it over the keys, the last axis (dim=-1).",
        ),
    ]
    if mask is not None:
        mistakes += [
            (
                lambda: softmax(scores / math.sqrt(dk), keep=~mask),
                "The mask is inverted: True means the query MAY attend to the key (fill -inf where the mask is False).",
            ),
            (
                lambda: softmax(scores / math.sqrt(dk)),
                "The mask is ignored: fill the scores with -inf where mask is False.",
            ),
            (
                lambda: softmax(scores / math.sqrt(dk)) * mask,
                "The mask is applied after the softmax: fill the scores with -inf before it, so each row still "
                "sums to 1.",
            ),
        ]
    return [((lambda f=f: f() @ V), hint) for f, hint in mistakes] + [(f, hint) for f, hint in mistakes]


SDPA = Values(
    NAME,
    sdpa_cases,
    sdpa_inputs,
    ref.scaled_dot_product_attention,
    max_examples=6,
    examples=(SMALL, UNMASKED),
    form=lambda got, args, context: _pair(got, _shapes(args), context),
    parts=(("A", 1), ("Y", 0)),
    mistakes=_sdpa_mistakes,
)

check_sdpa_returns_output_and_weights = check(
    form,
    "check_sdpa_returns_output_and_weights",
    """scaled_dot_product_attention returns a pair (Y, A) of tensors shaped (..., Nq, dv) and (..., Nq, Nk), in the
    input's dtype.

    Always judged.""",
    spec=replace(SDPA, form=_typed_pair),
)

check_sdpa_values = check(
    values,
    "check_sdpa_values",
    """Y = softmax(Q K^T / sqrt(dk), masked keys excluded) V and A the weights, as torch's scaled_dot_product_attention.

    Always judged.""",
    spec=SDPA,
)


def check_sdpa_weights_are_distributions(student):
    """Each row of A is non-negative, sums to 1 and is exactly 0 at the keys the mask forbids.

    Not judged when the result is not a pair (Y, A) of tensors of the expected shapes (the format check charges
    that)."""

    def prop(case):
        args = sdpa_inputs(case)
        context = Lazy(lambda: f"for {format_call(NAME, args)}")
        _, A = _pair(call(student, NAME, *args).value, _shapes(args), context)
        if not torch.isfinite(A).all() or (A < 0).any():
            raise CheckFailed(f"{context}: A has entries that are negative, inf or NaN: {describe(A)}")
        fail_if(
            compare_arrays(
                A.sum(-1),
                torch.ones(A.shape[:-1], dtype=A.dtype),
                name="the row sums of A",
                rtol=1e-9,
                atol=1e-9,
                check_dtype=False,
            ),
            context,
            hint="Take the softmax over the keys (the last axis), so that each query's weights sum to 1.",
        )
        if len(args) == 4:
            forbidden = A[~args[3].expand(A.shape)]
            if torch.any(forbidden != 0):
                raise CheckFailed(
                    f"{context}: A has {int((forbidden != 0).sum())} nonzero weights on keys the mask "
                    f"forbids (mask False); they must be exactly 0",
                    hint="mask True means 'may attend': fill the scores with -inf where the mask is False, "
                    "before the softmax.",
                )

    for_all(sdpa_cases(masks=("none", "full", "keys")), prop, max_examples=6, examples=(SMALL, UNMASKED))


def check_sdpa_fully_masked_row(student):
    """A query that may attend to no key gets an all-zero row of A and an all-zero output row, and nothing is NaN.

    Not judged when the result is not a pair (Y, A) of tensors of the expected shapes (the format check charges
    that)."""

    def prop(case):
        lead, row, seed = case
        args = sdpa_inputs((lead, 3, 4, 2, 2, "full", seed))
        mask = args[3].clone()
        mask[..., row, :] = False  # query `row` may attend to nothing
        args[3] = mask
        context = Lazy(lambda: f"for {format_call(NAME, args)} (query {row} may attend to no key)")
        Y, A = _pair(call(student, NAME, *args).value, _shapes(args), context)
        if not (torch.isfinite(Y).all() and torch.isfinite(A).all()):
            raise CheckFailed(
                f"{context}: the result holds NaN or inf: Y = {describe(Y)}, A = {describe(A)}",
                hint="softmax over a row of -inf only is 0/0 = NaN; give such a row zero weights "
                "(for example, replace NaN by 0 or multiply by mask.any(-1, keepdim=True)).",
            )
        for part, got in (("A", A), ("Y", Y)):
            if torch.any(got[..., row, :] != 0):
                raise CheckFailed(
                    f"{context}: row {row} of {part} is {describe(got[..., row, :])}; expected all zeros, "
                    f"since that query may attend to no key"
                )

    for_all(
        st.tuples(st.sampled_from(LEADS), st.integers(0, 2), st.integers(0, 2**16)),
        prop,
        max_examples=3,
        examples=(((), 1, 0),),
    )


def _first_moved(index: int) -> Gate:
    """The gate: Y must change when position 0 of argument ``index`` (the queries, or the keys) changes."""

    def perturb(args: list, seed: int) -> list:
        moved = args[index].clone()
        moved[..., 0, :] += 1.0 + gaussian(77, *moved[..., 0, :].shape).abs()
        return with_arg(args, index, moved)

    return Gate(perturb, lambda result: result[0])


def _unmasked(reordered: int):
    """Unmasked cases with at least two queries (``reordered`` = 1) or two keys (2)."""
    return lambda: sdpa_cases(masks=("none",)).filter(lambda c: c[reordered] > 1)


UNJUDGED_Q = "Y never changed when a query changed, so the result does not attend from the queries at all"
UNJUDGED_K = "Y never changed when a key changed, so the weights do not depend on the keys at all"
ROWS = "; expected the rows of the original {part} in the new order"

check_sdpa_query_permutation_equivariance = check(
    permutation_equivariance,
    "check_sdpa_query_permutation_equivariance",
    """Reordering the queries reorders the rows of Y and A the same way.

    Not judged when the result is not a pair (Y, A) of the expected shapes, or when Y never changes as a query
    changes (nothing then depends on the queries' order).""",
    spec=Permutation(
        NAME,
        _unmasked(1),
        sdpa_inputs,
        lambda case: case[-1],
        examples=(UNMASKED,),
        form=SDPA.form,
        parts=(Part("Y", 0, expected=ROWS), Part("A", 1, expected=ROWS)),
        gate=_first_moved(0),
        unjudged=UNJUDGED_Q,
        context="for {call} and the queries reordered as {perm}",
        label="{part} for the reordered queries",
    ),
)

check_sdpa_key_value_permutation_invariance = check(
    permutation_equivariance,
    "check_sdpa_key_value_permutation_invariance",
    """Reordering the keys and values together leaves Y unchanged and reorders the columns of A the same way.

    Not judged when the result is not a pair (Y, A) of the expected shapes, or when Y never changes as a key
    changes (nothing then depends on the keys' order).""",
    spec=Permutation(
        NAME,
        _unmasked(2),
        sdpa_inputs,
        lambda case: case[-1] + 1,
        examples=(UNMASKED,),
        arguments=(1, 2),
        form=SDPA.form,
        parts=(
            Part(
                "Y",
                0,
                axis=None,
                expected="; expected the original Y: attention is a weighted sum over the keys, whatever their order",
            ),
            Part("A", 1, axis=-1, expected="; expected the columns of the original A in the new order"),
        ),
        gate=_first_moved(1),
        unjudged=UNJUDGED_K,
        context="for {call} and the keys and values reordered as {perm}",
        label="{part} for the reordered keys and values",
    ),
)


# by hand: templates.gradients takes one tensor's sum(output * c); here (Y, A): two cotangents, one rate.
def check_sdpa_gradients(student):
    """Gradients of sum(Y * c) + sum(A * c') with respect to Q, K and V agree with how the student's own (Y, A) change.

    Not judged when the result is not a pair (Y, A) of tensors of the expected shapes (the format check charges
    that)."""

    def prop(case):
        args = sdpa_inputs(case)
        shapes = _shapes(args)
        seed = case[-1]
        cots = [gaussian(seed + 7, *shapes[0]), gaussian(seed + 8, *shapes[1])]
        context = Lazy(lambda: f"for {format_call(NAME, args)}")
        reply = call(student, NAME, *args, grad_wrt=(0, 1, 2), cotangent=cots)
        _pair(reply.value, shapes, context)
        if reply.grads is None:
            raise CheckFailed(
                f"{context}: the result is not differentiable (it does not require grad); build it from "
                f"torch operations on the inputs",
                kind="not_differentiable",
            )
        directions = [gaussian(seed + 31 + k, *args[k].shape) for k in range(3)]
        predicted = sum(
            float((g.to(torch.float64) * d).sum())
            for g, d in zip(reply.grads, directions)
            if kind_of(g) == "tensor" and g.shape == d.shape
        )
        eps, rtol = fd_settings(args[0].dtype)

        def objective(sign):
            moved = [a + sign * eps * d for a, d in zip(args[:3], directions)] + args[3:]
            Y, A = _pair(call(student, NAME, *moved).value, shapes, context)
            return float((Y * cots[0]).sum() + (A * cots[1]).sum())

        numeric = (objective(+1) - objective(-1)) / (2 * eps)
        if abs(numeric - predicted) > rtol * (1 + abs(numeric)):
            raise CheckFailed(
                f"{context}: moving Q, K, V along a random direction changes sum(Y * c) + sum(A * c') at "
                f"rate {numeric:.6g} (finite differences of your function), but the gradients autograd "
                f"found predict {predicted:.6g}",
                kind="not_differentiable",
            )

    for_all(sdpa_cases(masks=("none", "full")), prop, max_examples=3, examples=(SMALL,))
