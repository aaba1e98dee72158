"""Checks for layer_norm, rms_norm and swiglu: values for several leading shapes, and gradients.

Values are compared with the reference (layer_norm's is tested against ``torch.nn.functional.layer_norm``);
gradients are judged against finite differences of the student's own function.
"""

from __future__ import annotations

import torch

from grader.checking.gate import Probe
from grader.checking.strategies import gaussian, st
from grader.checking.templates import Gradients, Values, check, gradients, values
from reference import transformer as ref

LEADS = ((), (3,), (2, 3), (2, 1, 3))
EPS = (1e-5, 0.1, 0.5)


def norm_cases():
    """``(lead, D, eps, seed)``."""
    return st.tuples(st.sampled_from(LEADS), st.integers(2, 5), st.sampled_from(EPS), st.integers(0, 2**16))


NORM_EXAMPLES = (((2,), 4, 1e-5, 0), ((), 3, 0.5, 1), ((2, 1, 3), 2, 0.1, 2))


def _same_shape(args):
    return tuple(args[0].shape)


def _seed(case):
    return case[-1]


# --- layer_norm ------------------------------------------------------------------------------------------


def layer_norm_inputs(case) -> list:
    lead, D, eps, seed = case
    return [gaussian(seed, *lead, D) * 2 + 0.5, 1 + gaussian(seed + 1, D) / 2, gaussian(seed + 2, D) / 2, eps]


PROBE_LAYER_NORM = Probe("layer_norm", norm_cases(), layer_norm_inputs, ref.layer_norm, {0: "x", 1: "gamma", 2: "beta"})


def _layer_norm_mistakes(x, gamma, beta, eps):
    mean = x.mean(-1, keepdim=True)
    return [
        (
            lambda: (x - mean) / torch.sqrt(x.var(-1, unbiased=True, keepdim=True) + eps) * gamma + beta,
            "Use the biased variance (divide by D, as torch.nn.functional.layer_norm does): var(unbiased=False), "
            "not the unbiased one.",
        ),
        (
            lambda: (x - mean) / (x.std(-1, unbiased=False, keepdim=True) + eps) * gamma + beta,
            "eps goes inside the square root: (x - mean) / sqrt(var + eps).",
        ),
        (lambda: (x - mean) / x.std(-1, unbiased=False, keepdim=True) * gamma + beta, "Add eps to the variance."),
        (
            lambda: ((x - mean) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps) + beta) * gamma,
            "Scale by gamma first, then shift by beta.",
        ),
    ]


check_layer_norm_values = check(
    values,
    "check_layer_norm_values",
    """layer_norm(x, gamma, beta, eps) equals torch.nn.functional.layer_norm over the last axis, for any leading shape.

    Always judged.""",
    spec=Values(
        "layer_norm",
        norm_cases,
        layer_norm_inputs,
        ref.layer_norm,
        max_examples=8,
        examples=NORM_EXAMPLES,
        mistakes=_layer_norm_mistakes,
    ),
)

check_layer_norm_gradients = check(
    gradients,
    "check_layer_norm_gradients",
    """Gradients of layer_norm with respect to x, gamma and beta agree with how its output changes.

    Not judged when the result is not a tensor shaped like x (see the values check).""",
    spec=Gradients(
        "layer_norm",
        norm_cases,
        layer_norm_inputs,
        (0, 1, 2),
        ("x", "gamma", "beta"),
        _same_shape,
        _seed,
        max_examples=2,
        examples=(((2, 3), 4, 1e-5, 0),),
    ),
)


# --- rms_norm --------------------------------------------------------------------------------------------


def rms_norm_inputs(case) -> list:
    lead, D, eps, seed = case
    return [gaussian(seed, *lead, D) * 2 + 0.5, 1 + gaussian(seed + 1, D) / 2, eps]


PROBE_RMS_NORM = Probe("rms_norm", norm_cases(), rms_norm_inputs, ref.rms_norm, {0: "x", 1: "gamma"})


def _rms_norm_mistakes(x, gamma, eps):
    ms = (x * x).mean(-1, keepdim=True)
    return [
        (lambda: x / (torch.sqrt(ms) + eps) * gamma, "eps goes inside the square root: x / sqrt(mean(x^2) + eps)."),
        (lambda: x / torch.sqrt((x * x).sum(-1, keepdim=True) + eps) * gamma, "Take the mean of x^2, not the sum."),
        (
            lambda: (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps) * gamma,
            "RMSNorm does not subtract the mean: divide x by sqrt(mean(x^2) + eps).",
        ),
    ]


check_rms_norm_values = check(
    values,
    "check_rms_norm_values",
    """rms_norm(x, gamma, eps) = x / sqrt(mean(x^2) + eps) * gamma over the last axis, for any leading shape.

    Always judged.""",
    spec=Values(
        "rms_norm",
        norm_cases,
        rms_norm_inputs,
        ref.rms_norm,
        max_examples=8,
        examples=NORM_EXAMPLES,
        mistakes=_rms_norm_mistakes,
    ),
)

check_rms_norm_gradients = check(
    gradients,
    "check_rms_norm_gradients",
    """Gradients of rms_norm with respect to x and gamma agree with how its output changes.

    Not judged when the result is not a tensor shaped like x (see the values check).""",
    spec=Gradients(
        "rms_norm",
        norm_cases,
        rms_norm_inputs,
        (0, 1),
        ("x", "gamma"),
        _same_shape,
        _seed,
        max_examples=2,
        examples=(((2, 3), 4, 1e-5, 0),),
    ),
)


# --- swiglu ----------------------------------------------------------------------------------------------


def swiglu_inputs(case) -> list:
    lead, D, F, seed = case
    return [gaussian(seed, *lead, D), gaussian(seed + 1, D, F), gaussian(seed + 2, D, F), gaussian(seed + 3, F, D)]


def swiglu_cases():
    """``(lead, D, F, seed)``."""
    return st.tuples(st.sampled_from(LEADS), st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**16))


PROBE_SWIGLU = Probe("swiglu", swiglu_cases(), swiglu_inputs, ref.swiglu, {0: "x", 1: "W1", 2: "W2", 3: "W3"})


def _swiglu_mistakes(x, W1, W2, W3):
    silu = torch.nn.functional.silu
    return [
        (lambda: ((x @ W1) * silu(x @ W2)) @ W3, "silu applies to x W1; x W2 is the linear gate."),
        (lambda: (torch.sigmoid(x @ W1) * (x @ W2)) @ W3, "silu(z) = z * sigmoid(z), not sigmoid(z)."),
        (lambda: (torch.relu(x @ W1) * (x @ W2)) @ W3, "That is relu; use silu (torch.nn.functional.silu)."),
        (lambda: silu(x @ W1 * (x @ W2)) @ W3, "Apply silu to x W1 alone, then multiply by x W2."),
    ]


check_swiglu_values = check(
    values,
    "check_swiglu_values",
    """swiglu(x, W1, W2, W3) = (silu(x W1) * (x W2)) W3, for any leading shape.

    Always judged.""",
    spec=Values(
        "swiglu",
        swiglu_cases,
        swiglu_inputs,
        ref.swiglu,
        max_examples=8,
        examples=(((2, 3), 3, 4, 0), ((), 2, 3, 1)),
        mistakes=_swiglu_mistakes,
    ),
)

check_swiglu_gradients = check(
    gradients,
    "check_swiglu_gradients",
    """Gradients of swiglu with respect to x, W1, W2 and W3 agree with how its output changes.

    Not judged when the result is not a tensor of shape (..., D) (see the values check).""",
    spec=Gradients(
        "swiglu",
        swiglu_cases,
        swiglu_inputs,
        (0, 1, 2, 3),
        ("x", "W1", "W2", "W3"),
        lambda args: (*args[0].shape[:-1], args[3].shape[1]),
        _seed,
        max_examples=2,
        examples=(((2, 3), 3, 4, 0),),
    ),
)
