"""Checks for recurrent_unit, ar_as_recurrent and the batched forward pass.

``forward`` is graded with the grader's stand-in unit (:func:`grader.assignments.sequence_models.stand_ins.other_unit`)
in place of the student's ``recurrent_unit``: its values are compared with a composition of that unit, and its
vectorization is judged from the calls the grader itself served.
"""

from __future__ import annotations

import numpy as np
import torch

import reference
from grader.checking import strategies
from grader.checking.base import CheckFailed, Lazy, Passed, call, diagnose, fail_if, for_all, format_call
from grader.checking.compare import ATOL, RTOL, as_numpy, compare_arrays, describe, kind_of
from grader.checking.gate import Probe
from grader.checking.positions import Gate, Part, Permutation, any_permutation, permutation_equivariance, responds
from grader.checking.standins import StandIn, parameters
from grader.checking.strategies import Dims, gaussian, rnn_sequence_inputs, rnn_step_inputs, st
from grader.checking.templates import Gradients, Values, check, form, gradients, single_example, values

from .stand_ins import other_unit

SMALL = Dims(B=2, T=3, d_in=2, d_h=3, seed=0)


def _expect_tensor(value, shape, context: str, name: str = "the result") -> torch.Tensor:
    if kind_of(value) != "tensor":
        raise CheckFailed(f"{context}: {name} should be a torch tensor but is {describe(value)}", kind="type")
    if tuple(value.shape) != tuple(shape):
        raise CheckFailed(f"{context}: {name} has shape {tuple(value.shape)}; expected {tuple(shape)}", kind="shape")
    return value.detach()


# --- recurrent_unit ------------------------------------------------------------------------------------

PROBE_RECURRENT_UNIT = Probe(
    "recurrent_unit",
    strategies.rnn_dims(),
    rnn_step_inputs,
    reference.recurrent_unit,
    {0: "x", 1: "h_prev", 2: "Wrec", 3: "Win"},
)


def _unit_mistakes(args):
    x, h, Wrec, Win = args
    return (
        (lambda: torch.tanh(h @ Wrec.T + x @ Win.T), "That is tanh; this unit uses relu (torch.relu)."),
        (lambda: h @ Wrec.T + x @ Win.T, "The relu is missing: apply torch.relu to the sum."),
        (
            lambda: torch.relu(h @ Wrec + x @ Win.T),
            "Wrec is used untransposed: with examples as rows, multiply by Wrec.T.",
        ),
        (lambda: torch.relu(h @ Wrec.T + (x @ Win.T) * 0), "The input term x @ Win.T is missing."),
        (lambda: torch.relu(x @ Win.T), "The recurrent term h_prev @ Wrec.T is missing."),
    )


def _unit_cases():
    return st.tuples(strategies.rnn_dims(), st.booleans())


def _unit_inputs(case) -> list:
    dims, zero_state = case
    args = rnn_step_inputs(dims)
    if zero_state:  # h_prev = 0, as at the first step of every sequence
        args[1] = torch.zeros_like(args[1])
    return args


def _unit_shape(args) -> tuple:
    return (args[0].shape[0], args[2].shape[0])  # (B, d_h)


check_recurrent_unit_values = check(
    values,
    "check_recurrent_unit_values",
    """recurrent_unit computes relu(h_prev @ Wrec.T + x @ Win.T) for a batch of inputs.

    Always judged.""",
    spec=Values(
        "recurrent_unit",
        _unit_cases,
        _unit_inputs,
        reference.recurrent_unit,
        examples=((SMALL, False), (SMALL, True)),
        form=lambda got, args, context: _expect_tensor(got, _unit_shape(args), context),
        mistakes=lambda *args: _unit_mistakes(list(args)),
    ),
)

check_recurrent_unit_single_example = check(
    single_example,
    "check_recurrent_unit_single_example",
    """recurrent_unit on one example (x of shape (d_in,), h_prev of shape (d_h,)) gives that example's row of the batch.

    Not judged when the batched result is not a tensor with one row per example (see the values check).""",
    function="recurrent_unit",
    cases=strategies.rnn_dims,
    inputs=rnn_step_inputs,
    single=lambda args, i: [args[0][i], args[1][i], *args[2:]],
    rows=lambda dims: sorted({0, dims.B - 1}),
    max_examples=6,
    examples=(SMALL,),
)

check_recurrent_unit_gradients = check(
    gradients,
    "check_recurrent_unit_gradients",
    """Gradients of recurrent_unit with respect to x, h_prev, Wrec and Win agree with how its output changes.

    Not judged when the result is not a (B, d_h) tensor (see the values check).""",
    spec=Gradients(
        "recurrent_unit",
        strategies.rnn_dims,
        rnn_step_inputs,
        (0, 1, 2, 3),
        ("x", "h_prev", "Wrec", "Win"),
        _unit_shape,
        lambda dims: dims.seed,
        max_examples=6,
        examples=(SMALL,),
    ),
)


# --- ar_as_recurrent -----------------------------------------------------------------------------------

PROBE_AR_AS_RECURRENT = Probe(
    "ar_as_recurrent", strategies.ar_coefficients(), lambda w: [w], reference.ar_as_recurrent, {0: "w"}
)


def _unpack_linear_rnn(value, context):
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise CheckFailed(
            f"{context} should return three tensors (Wrec, win, wout); got {describe(value)}", kind="type"
        )
    Wrec, win, wout = (as_numpy(v).astype(np.float64) if kind_of(v) in ("tensor", "ndarray") else None for v in value)
    if Wrec is None or win is None or wout is None:
        raise CheckFailed(f"{context} should return tensors; got {', '.join(describe(v) for v in value)}", kind="type")
    if Wrec.ndim != 2 or Wrec.shape[0] != Wrec.shape[1]:
        raise CheckFailed(f"{context}: Wrec should be a square (d_h, d_h) matrix; got shape {Wrec.shape}", kind="shape")
    d_h = Wrec.shape[0]
    for name, vec in (("win", win), ("wout", wout)):
        if vec.size != d_h:
            raise CheckFailed(
                f"{context}: {name} should hold d_h = {d_h} numbers (one per hidden unit); got shape {vec.shape}",
                kind="shape",
            )
    return Wrec, win.reshape(d_h), wout.reshape(d_h)


# The result's form only: its values are judged by running the unit (check_ar_as_recurrent_reproduces_ar_model).
LINEAR_RNN = Values(
    "ar_as_recurrent",
    strategies.ar_coefficients,
    lambda w: [w],
    reference.ar_as_recurrent,
    form=lambda got, args, context: _unpack_linear_rnn(got, context),
    lead="",
)

check_ar_as_recurrent_shapes = check(
    form,
    "check_ar_as_recurrent_shapes",
    """ar_as_recurrent returns (Wrec, win, wout) with Wrec square and win, wout one number per hidden unit.

    Always judged.""",
    spec=LINEAR_RNN,
    max_examples=10,
)


# by hand: judges the unit ar_as_recurrent returns, run over x, not the value of one call
def check_ar_as_recurrent_reproduces_ar_model(student):
    """The linear unit h(t) = Wrec h(t-1) + win x(t), y(t) = wout . h(t) reproduces y(t) = w[0] x(t-s+1) + ... + w[s-1]
    x(t), w oldest first as ar_fit gives it.

    Always judged."""

    def prop(case):
        w, x = case
        context = Lazy(lambda: format_call("ar_as_recurrent", (w,)))
        Wrec, win, wout = _unpack_linear_rnn(call(student, "ar_as_recurrent", w).value, context)
        h = np.zeros(Wrec.shape[0])
        got = []
        for value in x:
            h = Wrec @ h + win * value
            got.append(float(wout @ h))
        want = np.convolve(x, w[::-1])[: len(x)]  # y(t) = sum_k w[k] x(t - s + 1 + k): w[-1] on the newest input
        reversed_order = (
            (
                lambda: np.convolve(x, w)[: len(x)],
                "w is oldest first, in ar_fit's order: w[-1] weighs the newest input x(t) and w[0] the "
                "input s - 1 steps back, so a register that holds the newest input first reads out w reversed.",
            ),
        )
        fail_if(
            compare_arrays(
                np.array(got), want, name=f"the unit's outputs for inputs x = {describe(x)}", rtol=1e-6, atol=1e-9
            ),
            context,
            hint=diagnose(np.array(got), reversed_order),
        )

    inputs = st.tuples(
        strategies.ar_coefficients(),
        st.lists(st.sampled_from([1.0, 0.0, -2.0, 3.0]), min_size=1, max_size=8).map(lambda v: np.array(v)),
    )
    for_all(inputs, prop, examples=((np.array([0.5, 2.0]), np.array([1.0, 0.0, 0.0, 0.0])),))


# --- forward -------------------------------------------------------------------------------------------


def _compose(unit, seqs, Wrec, Win, Wout):
    """forward's definition with ``unit`` as the recurrent unit: ``(h(T) @ Wout)[:, 0]``."""
    h = torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)  # h(0): (B, d_h)
    for t in range(seqs.shape[1]):
        h = unit(seqs[:, t], h, Wrec, Win)  # (B, d_in) -> (B, d_h)
    return (h @ Wout)[:, 0]  # (B,)


SECOND_UNIT = StandIn(
    "recurrent_unit",
    parameters(reference.recurrent_unit),
    lambda x, h, Wrec, Win: 0.8 * other_unit(x, h, Wrec, Win) - 0.1,
)  # any other unit would do

NOT_COMPOSED = (
    "forward's result did not follow the recurrent_unit it was given. To judge forward on its own, the "
    "grader runs it with its own recurrent unit (a different formula from yours) in place of "
    "recurrent_unit, so forward must get every new state from calling recurrent_unit, not from a "
    "formula written out inside forward"
)


PROBE_FORWARD = Probe(
    "forward",
    strategies.rnn_dims(),
    rnn_sequence_inputs,
    lambda *args: _compose(other_unit, *args),  # the unit forward is graded with
    {0: "seqs", 1: "Wrec", 2: "Win", 3: "Wout"},
)


def check_forward_composes_recurrent_unit(student):
    """forward returns (h(T) @ Wout)[:, 0] where h(t) = recurrent_unit(seqs[:, t-1], h(t-1)) and h(0) = 0.

    Always judged."""

    def prop(dims):
        args = rnn_sequence_inputs(dims)
        context = Lazy(lambda: f"for {format_call('forward', args)}")
        got = _expect_tensor(call(student, "forward", *args).value, (dims.B,), context)
        if compare_arrays(got, _compose(reference.recurrent_unit, *args), rtol=RTOL, atol=ATOL) is None:
            return  # the course's unit written out inside forward: right values (vectorization is judged apart)
        fail_if(
            compare_arrays(got, _compose(other_unit, *args), rtol=RTOL, atol=ATOL),
            f"{context}, with the grader's recurrent unit in place of yours",
        )

    for_all(strategies.rnn_dims(), prop, examples=(SMALL,))


check_forward_gradients = check(
    gradients,
    "check_forward_gradients",
    """Gradients of forward with respect to seqs, Wrec, Win and Wout agree with how its output changes.

    Not judged when the result is not a (B,) tensor (see the values check).""",
    spec=Gradients(
        "forward",
        strategies.rnn_dims,
        rnn_sequence_inputs,
        (0, 1, 2, 3),
        ("seqs", "Wrec", "Win", "Wout"),
        lambda args: (args[0].shape[0],),
        lambda dims: dims.seed,
        max_examples=5,
        examples=(SMALL,),
    ),
)


def _forward_result(value, args, context) -> torch.Tensor:
    return _expect_tensor(value, (args[0].shape[0],), context)  # (B,)


def _first_replaced(args: list, seed: int) -> list:
    """The arguments with sequence 0 replaced by other numbers."""
    seqs = args[0].clone()
    seqs[0] = gaussian(seed + 13, *seqs.shape[1:])
    return [seqs, *args[1:]]


# Gate of the batch properties: the output for sequence 0 changes when sequence 0 changes (else nothing here
# depends on the sequences, so the batch properties say nothing).
OWN_SEQUENCE = Gate(_first_replaced, lambda y: y[:1])


def _own_sequence_matters(student, args, dims, context):
    """forward's result for ``args``, after the gate of the batch properties (else Skip)."""
    y = _forward_result(call(student, "forward", *args).value, args, context)
    responds(student, "forward", OWN_SEQUENCE, args, dims.seed, y, _forward_result, context)
    return y


UNJUDGED_BATCH = (
    "forward's output for a sequence never changed when that sequence changed, so it computes nothing "
    "from its sequences that a batch property could check"
)

check_forward_batch_permutation_equivariance = check(
    permutation_equivariance,
    "check_forward_batch_permutation_equivariance",
    """Reordering the sequences in a batch reorders forward's outputs the same way.

    Not judged when the result is not a (B,) tensor, or when the output for a sequence never changes as that
    sequence changes (it computes nothing from its sequences).""",
    spec=Permutation(
        "forward",
        lambda: strategies.rnn_dims(min_batch=2),
        rnn_sequence_inputs,
        lambda dims: dims.seed,
        max_examples=6,
        examples=(SMALL,),
        axis=0,
        permutation=any_permutation,
        form=_forward_result,
        parts=(Part(axis=0, expected="; forward(seqs[perm]) should equal forward(seqs)[perm]"),),
        gate=OWN_SEQUENCE,
        unjudged=UNJUDGED_BATCH,
        context="for {call} and the batch reordered as {perm}",
        label="forward(seqs[perm])",
    ),
)


# by hand: its draws and messages predate the templates; the influence template would change what is drawn and said
def check_forward_batch_independence(student):
    """Each output of forward depends only on its own sequence: changing another sequence leaves it unchanged.

    Not judged when the result is not a (B,) tensor, or when the output for a sequence never changes as that
    sequence changes (it computes nothing from its sequences)."""

    def prop(dims):
        seqs, *weights = args = rnn_sequence_inputs(dims)
        other = seqs.clone()
        other[1:] = gaussian(dims.seed + 11, dims.B - 1, dims.T, dims.d_in)  # change every sequence but the first
        context = Lazy(lambda: f"for {format_call('forward', args)} with sequences 1..{dims.B - 1} replaced")
        y = _own_sequence_matters(student, args, dims, context)
        y2 = _expect_tensor(call(student, "forward", other, *weights).value, (dims.B,), context)
        fail_if(compare_arrays(y2[:1], y[:1], name="the output for sequence 0", rtol=RTOL, atol=ATOL), context)

    for_all(strategies.rnn_dims(min_batch=2), prop, max_examples=6, examples=(SMALL,), unjudged=UNJUDGED_BATCH)


def check_forward_is_vectorized(student):
    """forward builds its result from recurrent_unit's results, and every call it makes passes the whole batch (B,
    d_in).

    Not judged when forward's result does not follow the recurrent_unit it is given (then its calls to
    recurrent_unit say nothing about how it computes)."""
    dims = Dims(B=3, T=4, d_in=2, d_h=3, seed=5)
    args = rnn_sequence_inputs(dims)
    context = f"for seqs of shape {(dims.B, dims.T, dims.d_in)}"
    reply = call(student, "forward", *args)
    got = _expect_tensor(reply.value, (dims.B,), context)
    # The same call with a second unit: a result built from the unit's results changes with the unit.
    second = call(student, "forward", *args, stand_ins={"recurrent_unit": SECOND_UNIT}).value
    if kind_of(second) == "tensor" and compare_arrays(got, second, rtol=RTOL, atol=ATOL) is None:
        raise CheckFailed(
            f"{context}: {NOT_COMPOSED}; vectorization is judged from the calls forward makes to "
            f"recurrent_unit, so it could not be judged",
            kind="not_judged",
            hint="Call recurrent_unit(seqs[:, t], h, Wrec, Win) once per time step.",
        )
    calls = [s.shapes[0] if s.shapes else () for s in reply.served if s.name == "recurrent_unit"]
    if not calls or any(shape != (dims.B, dims.d_in) for shape in calls):
        if len(calls) == dims.B * dims.T:
            detail = "it called recurrent_unit once per example per step; pass the whole batch seqs[:, t] at once"
        else:
            detail = f"it made {len(calls)} calls, with x of shapes {calls[:6]}{'...' if len(calls) > 6 else ''}"
        raise CheckFailed(
            f"{context} every call of recurrent_unit should pass the whole batch, x of shape "
            f"{(dims.B, dims.d_in)}, once per time step; {detail}"
        )
    return Passed()
