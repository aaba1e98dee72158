"""Checks for causal_conv1d (values, causality, gradients) and receptive_field."""
from __future__ import annotations

import numpy as np
import torch

from grader.checking.answers import whole_number
from grader.checking.base import CheckFailed, Lazy, NotJudged, call, for_all, format_call
from grader.checking.compare import describe, kind_of
from grader.checking.gate import Probe
from grader.checking.strategies import gaussian, st
from grader.checking.templates import Gradients, Values, check, gradients, values
from reference import rnn_lm

SMALL = {"T": 6, "K": 2, "dilation": 2, "seed": 0}


def conv_sizes(*, min_len: int = 1):
    """Length T, kernel size K, dilation, and a seed for the numbers."""
    return st.fixed_dictionaries({"T": st.integers(min_len, 8), "K": st.integers(1, 3), "dilation": st.integers(1, 3),
                                  "seed": st.integers(0, 2**16)})


def conv_inputs(dims: dict) -> list:
    """``[x (T,), w (K,), dilation]``."""
    return [gaussian(dims["seed"], dims["T"]), gaussian(dims["seed"] + 1, dims["K"]), dims["dilation"]]


def _conv(student, args, context) -> torch.Tensor:
    return _conv_form(call(student, "causal_conv1d", *args).value, args, context)


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


def check_causal_conv1d_shape(student):
    """causal_conv1d returns a tensor of shape (T,) in x's dtype.

    Always judged."""

    def prop(dims):
        args = conv_inputs(dims)
        _conv(student, args, Lazy(lambda: f"for {format_call('causal_conv1d', args)}"))

    for_all(conv_sizes(), prop, max_examples=4, examples=(SMALL,))


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
        (lambda: _shifted(x, w, d, lambda k: -(K - 1 - k) * d), "w[0] multiplies the newest input x[t]: flip w before "
         "F.conv1d (it computes a correlation, not a convolution)."),
        (lambda: _shifted(x, w, d, lambda k: -k), "The dilation is ignored: the taps are x[t - k * dilation]."),
        (lambda: _shifted(x, w, d, lambda k: (K - 1 - k) * d), "The padding is on the right, so y[t] looks at later "
         "inputs: pad (K - 1) * dilation zeros on the left (before the start)."),
        (lambda: _shifted(x, w, d, lambda k: k * d), "The padding is on the right and w is not flipped: y[t] must use "
         "x[t - k * dilation], the past."),
    )


check_causal_conv1d_values = check(values, "check_causal_conv1d_values", """causal_conv1d gives y(t) = sum_k w(k) x(t - k * dilation), with zeros before the start.

    Always judged.""", spec=Values("causal_conv1d", conv_sizes, conv_inputs, rnn_lm.causal_conv1d, max_examples=8,
                                   examples=(SMALL,), form=_conv_form, mistakes=_mistakes))


def check_causal_conv1d_causality(student):
    """Changing the input at position j leaves every output at an earlier position i < j unchanged.

    Not judged when the result is not a (T,) tensor in x's dtype, or when no output ever changes as an earlier
    input changes (w[0] * x is trivially causal)."""
    mixes: list[bool] = []

    def prop(dims):
        x, w, d = args = conv_inputs(dims)
        T = dims["T"]
        context = Lazy(lambda: f"for {format_call('causal_conv1d', args)}")
        base = _conv(student, args, context)
        influence = np.zeros((T, T), dtype=bool)  # influence[i, j]: y[i] moved when x[j] moved
        for j in range(T):
            moved = x.clone()
            moved[j] += 1.0
            influence[:, j] = ((_conv(student, [moved, w, d], context) - base).abs() > 1e-12).numpy()
        leaks = [(i, j) for i in range(T) for j in range(i + 1, T) if influence[i, j]]
        if leaks:
            i, j = leaks[0]
            raise CheckFailed(f"{context}: changing x[{j}] changed y[{i}], an earlier output; a causal convolution's "
                              f"y[t] may use x[0..t] only ({len(leaks)} such pairs)")
        mixes.append(bool(any(influence[i, j] for i in range(T) for j in range(i))))

    for_all(conv_sizes(min_len=2), prop, max_examples=5, examples=(SMALL,))
    if not any(mixes):
        raise NotJudged("no output ever changed when an earlier input changed, so causal_conv1d uses no past input "
                        "at all (w[0] * x is causal, but it is not a convolution); causality pays only for outputs "
                        "that use the past")


check_causal_conv1d_gradients = check(gradients, "check_causal_conv1d_gradients", """Gradients of causal_conv1d with respect to x and w agree with how its output changes.

    Not judged when the result is not a (T,) tensor (the shape check charges that).""",
    spec=Gradients("causal_conv1d", conv_sizes, conv_inputs, (0, 1), ("x", "w"), lambda args: tuple(args[0].shape),
                   lambda dims: dims["seed"], max_examples=3, examples=(SMALL,)))


# --- receptive_field -----------------------------------------------------------------------------------

def check_receptive_field_values(student):
    """receptive_field(kernel_size, dilations) is the span of inputs one output of the stack sees: 1 + sum (K - 1) d.

    Always judged."""

    def prop(case):
        K, dilations = case
        context = Lazy(lambda: f"receptive_field({K}, {dilations})")
        got = whole_number(call(student, "receptive_field", K, list(dilations)).value, context)
        want = rnn_lm.receptive_field(K, dilations)
        if got != want:
            hint = ("Count the current input too: the field is 1 + sum over layers of (K - 1) * dilation."
                    if got == want - 1 else
                    "Each layer widens the field by (K - 1) * dilation inputs, not K * dilation."
                    if got == 1 + sum(K * d for d in dilations) or got == sum(K * d for d in dilations) else None)
            raise CheckFailed(f"{context} returned {got}; the stack sees {want} consecutive inputs", hint=hint)

    for_all(_field_cases(), prop, max_examples=10, examples=((2, [1, 2, 4]), (3, [1])))


def _field_cases():
    return st.tuples(st.integers(1, 5), st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=4))


PROBE_RECEPTIVE_FIELD = Probe("receptive_field", _field_cases(), list, rnn_lm.receptive_field,
                              {0: "kernel_size", 1: "dilations"})
