"""Checks for layer_norm, rms_norm and swiglu: values for several leading shapes, and gradients.

Values are compared with the reference (layer_norm's is tested against ``torch.nn.functional.layer_norm``);
gradients are judged against finite differences of the student's own function.
"""
from __future__ import annotations

import torch

from grader.checking.base import Lazy, call, diagnose, fail_if, for_all, format_call
from grader.checking.compare import compare_arrays
from grader.checking.gate import Probe
from grader.checking.positions import ATOL, RTOL
from grader.checking.properties import assert_gradients_match_own_function
from grader.checking.strategies import gaussian, st
from reference import transformer as ref

LEADS = ((), (3,), (2, 3), (2, 1, 3))
EPS = (1e-5, 0.1, 0.5)


def norm_cases():
    """``(lead, D, eps, seed)``."""
    return st.tuples(st.sampled_from(LEADS), st.integers(2, 5), st.sampled_from(EPS), st.integers(0, 2**16))


def _values(student, name, args, want, mistakes):
    context = Lazy(lambda: f"for {format_call(name, args)}")
    got = call(student, name, *args).value
    fail_if(compare_arrays(got, want, rtol=RTOL, atol=ATOL), context, hint=diagnose(got, mistakes))


# --- layer_norm ------------------------------------------------------------------------------------------

def layer_norm_inputs(case) -> list:
    lead, D, eps, seed = case
    return [gaussian(seed, *lead, D) * 2 + 0.5, 1 + gaussian(seed + 1, D) / 2, gaussian(seed + 2, D) / 2, eps]


PROBE_LAYER_NORM = Probe("layer_norm", norm_cases(), layer_norm_inputs, ref.layer_norm, {0: "x", 1: "gamma", 2: "beta"})


def _layer_norm_mistakes(x, gamma, beta, eps):
    mean = x.mean(-1, keepdim=True)
    return [
        (lambda: (x - mean) / torch.sqrt(x.var(-1, unbiased=True, keepdim=True) + eps) * gamma + beta,
         "Use the biased variance (divide by D, as torch.nn.functional.layer_norm does): var(unbiased=False), "
         "not the unbiased one."),
        (lambda: (x - mean) / (x.std(-1, unbiased=False, keepdim=True) + eps) * gamma + beta,
         "eps goes inside the square root: (x - mean) / sqrt(var + eps)."),
        (lambda: (x - mean) / x.std(-1, unbiased=False, keepdim=True) * gamma + beta, "Add eps to the variance."),
        (lambda: ((x - mean) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps) + beta) * gamma,
         "Scale by gamma first, then shift by beta."),
    ]


def check_layer_norm_values(student):
    """layer_norm(x, gamma, beta, eps) equals torch.nn.functional.layer_norm over the last axis, for any leading shape.

    Always judged."""

    def prop(case):
        args = layer_norm_inputs(case)
        _values(student, "layer_norm", args, ref.layer_norm(*args), _layer_norm_mistakes(*args))

    for_all(norm_cases(), prop, max_examples=8, examples=(((2,), 4, 1e-5, 0), ((), 3, 0.5, 1), ((2, 1, 3), 2, 0.1, 2)))


def check_layer_norm_gradients(student):
    """Gradients of layer_norm with respect to x, gamma and beta agree with how its output changes.

    Not judged when the result is not a tensor shaped like x (see the values check)."""

    def prop(case):
        args = layer_norm_inputs(case)
        assert_gradients_match_own_function(student, "layer_norm", args, (0, 1, 2), ("x", "gamma", "beta"),
                                            tuple(args[0].shape), case[-1])

    for_all(norm_cases(), prop, max_examples=2, examples=(((2, 3), 4, 1e-5, 0),))


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
        (lambda: (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps) * gamma,
         "RMSNorm does not subtract the mean: divide x by sqrt(mean(x^2) + eps)."),
    ]


def check_rms_norm_values(student):
    """rms_norm(x, gamma, eps) = x / sqrt(mean(x^2) + eps) * gamma over the last axis, for any leading shape.

    Always judged."""

    def prop(case):
        args = rms_norm_inputs(case)
        _values(student, "rms_norm", args, ref.rms_norm(*args), _rms_norm_mistakes(*args))

    for_all(norm_cases(), prop, max_examples=8, examples=(((2,), 4, 1e-5, 0), ((), 3, 0.5, 1), ((2, 1, 3), 2, 0.1, 2)))


def check_rms_norm_gradients(student):
    """Gradients of rms_norm with respect to x and gamma agree with how its output changes.

    Not judged when the result is not a tensor shaped like x (see the values check)."""

    def prop(case):
        args = rms_norm_inputs(case)
        assert_gradients_match_own_function(student, "rms_norm", args, (0, 1), ("x", "gamma"), tuple(args[0].shape),
                                            case[-1])

    for_all(norm_cases(), prop, max_examples=2, examples=(((2, 3), 4, 1e-5, 0),))


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


def check_swiglu_values(student):
    """swiglu(x, W1, W2, W3) = (silu(x W1) * (x W2)) W3, for any leading shape.

    Always judged."""

    def prop(case):
        args = swiglu_inputs(case)
        _values(student, "swiglu", args, ref.swiglu(*args), _swiglu_mistakes(*args))

    for_all(swiglu_cases(), prop, max_examples=8, examples=(((2, 3), 3, 4, 0), ((), 2, 3, 1)))


def check_swiglu_gradients(student):
    """Gradients of swiglu with respect to x, W1, W2 and W3 agree with how its output changes.

    Not judged when the result is not a tensor of shape (..., D) (see the values check)."""

    def prop(case):
        args = swiglu_inputs(case)
        assert_gradients_match_own_function(student, "swiglu", args, (0, 1, 2, 3), ("x", "W1", "W2", "W3"),
                                            (*args[0].shape[:-1], args[3].shape[1]), case[-1])

    for_all(swiglu_cases(), prop, max_examples=2, examples=(((2, 3), 3, 4, 0),))

