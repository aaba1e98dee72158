"""Checks for causal_conv1d (values, causality, gradients) and receptive_field."""

from __future__ import annotations

import torch

from grader.checking.base import CheckFailed
from grader.checking.compare import describe, kind_of
from grader.checking.gate import Probe
from grader.checking.positions import Causality, causality
from grader.checking.strategies import gaussian, st
from grader.checking.templates import Count, Gradients, Values, check, count, form, gradients, values
from reference import rnn_lm

SMALL = {"T": 6, "K": 2, "dilation": 2, "seed": 0}


def conv_sizes(*, min_len: int = 1):
    """Length T, kernel size K, dilation, and a seed for the numbers."""
    return st.fixed_dictionaries(
        {
            "T": st.integers(min_len, 8),
            "K": st.integers(1, 3),
            "dilation": st.integers(1, 3),
            "seed": st.integers(0, 2**16),
        }
    )


def conv_inputs(dims: dict) -> list:
    """``[x (T,), w (K,), dilation]``."""
    return [gaussian(dims["seed"], dims["T"]), gaussian(dims["seed"] + 1, dims["K"]), dims["dilation"]]


def _conv_form(got, args, context) -> torch.Tensor:
    T = args[0].shape[0]
    if kind_of(got) != "tensor":
        raise CheckFailed(f"{context}: the result should be a torch tensor; got {describe(got)}", kind="type")
    if tuple(got.shape) != (T,):
        raise CheckFailed(f"{context}: the result has shape {tuple(got.shape)}; expected (T,) = ({T},)", kind="shape")
    if got.dtype != args[0].dtype:
        raise CheckFailed(f"{context}: the result has dtype {got.dtype}; expected {args[0].dtype}", kind="dtype")
    return got.detach()


PROBE_CAUSAL_CONV1D = Probe("causal_conv1d", conv_sizes(), conv_inputs, rnn_lm.causal_conv1d, {0: "x", 1: "w"})


def _shifted(x, w, d, direction):
    """sum_k w[k] x[t + direction(k)] with zeros outside, for the known mistakes."""
    T, K = x.shape[0], w.shape[0]
    y = torch.zeros_like(x)
    for t in range(T):
        for k in range(K):
            s = t + direction(k)
            if 0 <= s < T:
                y[t] += w[k] * x[s]
    return y


def _mistakes(x, w, d):
    K = w.shape[0]
    return (
        (
            lambda: _shifted(x, w, d, lambda k: -(K - 1 - k) * d),
            "w[0] multiplies the newest input x[t]: flip w before "
            "F.conv1d (it computes a correlation, not a convolution).",
        ),
        (lambda: _shifted(x, w, d, lambda k: -k), "The dilation is ignored: the taps are x[t - k * dilation]."),
        (
            lambda: _shifted(x, w, d, lambda k: (K - 1 - k) * d),
            "The padding is on the right, so y[t] looks at later "
            "inputs: pad (K - 1) * dilation zeros on the left (before the start).",
        ),
        (
            lambda: _shifted(x, w, d, lambda k: k * d),
            "The padding is on the right and w is not flipped: y[t] must use x[t - k * dilation], the past.",
        ),
    )


CONV = Values(
    "causal_conv1d",
    conv_sizes,
    conv_inputs,
    rnn_lm.causal_conv1d,
    max_examples=8,
    examples=(SMALL,),
    form=_conv_form,
    mistakes=_mistakes,
)

check_causal_conv1d_shape = check(
    form,
    "check_causal_conv1d_shape",
    """causal_conv1d returns a tensor of shape (T,) in x's dtype.

    Always judged.""",
    spec=CONV,
)

check_causal_conv1d_values = check(
    values,
    "check_causal_conv1d_values",
    """causal_conv1d gives y(t) = sum_k w(k) x(t - k * dilation), with zeros before the start.

    Always judged.""",
    spec=CONV,
)


def _bumped(args: list, j: int, seed: int) -> list:
    """The arguments with 1 added to x[j]."""
    x = args[0].clone()
    x[j] += 1.0
    return [x, *args[1:]]


check_causal_conv1d_causality = check(
    causality,
    "check_causal_conv1d_causality",
    """Changing the input at position j leaves every output at an earlier position i < j unchanged.

    Not judged when the result is not a (T,) tensor in x's dtype, or when no output ever changes as an earlier
    input changes (w[0] * x is trivially causal).""",
    spec=Causality(
        "causal_conv1d",
        lambda: conv_sizes(min_len=2),
        conv_inputs,
        lambda dims: dims["seed"],
        max_examples=5,
        examples=(SMALL,),
        axis=0,
        perturb=_bumped,
        form=_conv_form,
        out_axis=0,
        relative=False,
        figure="never",
        leak="{context}: changing x[{j}] changed y[{i}], an earlier output; a causal convolution's y[t] may "
        "use x[0..t] only ({count} such pairs)",
        unjudged="no output ever changed when an earlier input changed, so causal_conv1d uses no past input "
        "at all (w[0] * x is causal, but it is not a convolution); causality pays only for "
        "outputs that use the past",
    ),
)


check_causal_conv1d_gradients = check(
    gradients,
    "check_causal_conv1d_gradients",
    """Gradients of causal_conv1d with respect to x and w agree with how its output changes.

    Not judged when the result is not a (T,) tensor (the shape check charges that).""",
    spec=Gradients(
        "causal_conv1d",
        conv_sizes,
        conv_inputs,
        (0, 1),
        ("x", "w"),
        lambda args: tuple(args[0].shape),
        lambda dims: dims["seed"],
        max_examples=3,
        examples=(SMALL,),
    ),
)


# --- receptive_field -----------------------------------------------------------------------------------


def _field_cases():
    return st.tuples(st.integers(1, 5), st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=4))


def _field_hint(case, got: int, want: int) -> str | None:
    K, dilations = case
    if got == want - 1:
        return "Count the current input too: the field is 1 + sum over layers of (K - 1) * dilation."
    if got in (1 + sum(K * d for d in dilations), sum(K * d for d in dilations)):
        return "Each layer widens the field by (K - 1) * dilation inputs, not K * dilation."
    return None


check_receptive_field_values = check(
    count,
    "check_receptive_field_values",
    """receptive_field(kernel_size, dilations) is the span of inputs one output of the stack sees: 1 + sum (K - 1) d.

    Always judged.""",
    spec=Count(
        "receptive_field",
        _field_cases,
        lambda case: [case[0], list(case[1])],
        lambda case: rnn_lm.receptive_field(*case),
        lambda case, want: f"the stack sees {want} consecutive inputs",
        max_examples=10,
        examples=((2, [1, 2, 4]), (3, [1])),
        hint=_field_hint,
        show=lambda args: f"receptive_field({args[0]}, {args[1]})",
    ),
)


PROBE_RECEPTIVE_FIELD = Probe(
    "receptive_field", _field_cases(), list, rnn_lm.receptive_field, {0: "kernel_size", 1: "dilations"}
)
