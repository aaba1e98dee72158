"""The format and count templates (grader.checking.templates.form and count): each check built from them fails,
with its kind and its own message, on a wrong function (a wrong shape, a wrong dtype, a count off by one), and
passes on a right one. The checks are the course's own, run on student code in-process (no jail)."""

import pytest

from grader.assignments.attention import block, sdpa
from grader.assignments.registry import get_assignment
from grader.assignments.rnn_lm import convolution, ngrams
from grader.assignments.sequence_models import attention, autoregressive
from grader.checking.base import run_check
from grader.checking.reproduce import naming
from grader.sandbox.inprocess import InProcess

CONV1D = """
import torch
import torch.nn.functional as F

def causal_conv1d(x, w, dilation):
    K = w.shape[0]
    padded = F.pad(x[None, None], ((K - 1) * dilation, 0))
    return F.conv1d(padded, w.flip(0)[None, None], dilation=dilation)[0, 0]
"""


NAMES = {
    name: params
    for a in ("attention", "rnn_lm", "sequence_models")
    for name, params in get_assignment(a).argument_names.items()
}


def judge(check, source: str):
    """``check``'s result on the functions ``source`` defines, their arguments named as the judge names them."""
    student, reports = InProcess.from_cells([(0, source)])
    assert all(r["status"] == "ok" for r in reports), reports
    with naming(NAMES):
        return run_check(check.__name__, check, 1.0, student)


@pytest.mark.parametrize(
    "body,kind,words",
    [
        ("return x", None, None),
        ("return x[1:]", "shape", "the result has shape"),
        ("return x.float()", "dtype", "the result has dtype torch.float32; expected torch.float64"),
        ("return x.tolist()", "type", "the result should be a torch tensor"),
    ],
)
def test_the_format_template_fails_on_a_wrong_shape_dtype_or_type(body, kind, words):
    result = judge(convolution.check_causal_conv1d_shape, f"def causal_conv1d(x, w, dilation):\n    {body}\n")
    if kind is None:
        assert result.status == "passed", result.message
        return
    assert (result.status, result.kind, result.points) == ("failed", kind, 0.0), result.message
    assert result.message.startswith("for causal_conv1d(x, w, dilation): " + words), result.message


def test_a_format_check_that_asks_more_than_the_values_check_fails_where_the_values_form_passes():
    """The format check of scaled_dot_product_attention adds the dtype to the values check's form."""
    source = """
import torch

def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    A = torch.softmax(scores, -1).nan_to_num(0.0)
    return (A @ V).float(), A.float()
"""
    result = judge(sdpa.check_sdpa_returns_output_and_weights, source)
    assert (result.status, result.kind) == ("failed", "dtype"), result.message
    assert "Y has dtype torch.float32; expected torch.float64, the inputs' dtype" in result.message
    values = judge(sdpa.check_sdpa_values, source)  # the same spec's form lets the dtype through to the comparison
    assert (values.status, values.kind) == ("failed", "dtype"), values.message
    assert "A has dtype torch.float32; expected torch.float64 (the dtype of the input)" in values.message


def test_the_format_template_names_the_part_that_is_wrong():
    source = """
import numpy as np

def seq2col(seq, filter_size):
    seq = np.asarray(seq)
    X = np.stack([seq[i:i + filter_size] for i in range(len(seq) - filter_size)])
    return X, seq[filter_size:].reshape(-1, 1)
"""
    result = judge(autoregressive.check_seq2col_shapes_and_dtype, source)
    assert (result.status, result.kind) == ("failed", "shape"), result.message
    assert ", y has shape (3, 1); expected (3,)" in result.message, result.message


def test_a_format_check_without_for_keeps_its_own_words():
    result = judge(ngrams.check_ngram_probs_structure, "def ngram_probs(tokens, n):\n    return [tokens, n]\n")
    assert (result.status, result.kind) == ("failed", "type"), result.message
    assert result.message.startswith(
        "ngram_probs(['cows', 'eat', 'corn', 'cows', 'eat', 'grass'], 2) should return a dict; got"
    ), result.message


RECEPTIVE = "def receptive_field(kernel_size, dilations):\n    return {}\n"


@pytest.mark.parametrize(
    "answer",
    ["1 + sum((kernel_size - 1) * d for d in dilations)", "float(1 + sum((kernel_size - 1) * d for d in dilations))"],
)  # integral: that int
def test_the_count_template_passes_on_the_right_count(answer):
    assert judge(convolution.check_receptive_field_values, RECEPTIVE.format(answer)).status == "passed"


@pytest.mark.parametrize(
    "answer,got,hint",
    [
        ("sum((kernel_size - 1) * d for d in dilations)", 7, "Count the current input too"),
        ("1 + sum(kernel_size * d for d in dilations)", 15, "Each layer widens the field by (K - 1) * dilation inputs"),
        ("2 + sum((kernel_size - 1) * d for d in dilations)", 9, None),
    ],
)
def test_the_count_template_fails_on_a_count_off_by_one_with_the_mistakes_hint(answer, got, hint):
    result = judge(convolution.check_receptive_field_values, RECEPTIVE.format(answer))
    assert (result.status, result.kind, result.points) == ("failed", "values", 0.0), result.message
    assert result.message.startswith(
        f"receptive_field(2, [1, 2, 4]) returned {got}; the stack sees 8 consecutive inputs"
    ), result.message
    assert (f"Hint: {hint}" in result.message) if hint else ("Hint:" not in result.message), result.message


def test_the_count_template_gives_its_text_hint_and_says_what_has_the_count():
    source = "def attention_weights_bytes(N, H, bytes_per_element):\n    return N * N * bytes_per_element\n"
    result = judge(block.check_attention_weights_bytes_values, source)
    assert (result.status, result.kind) == ("failed", "values"), result.message
    assert result.message.startswith(
        "attention_weights_bytes(N, H, bytes_per_element) returned 2097152; the 8 weight "
        "matrices of a sequence of length 1024 in float16"
    ), result.message
    assert "Hint: Each head has its own N x N matrix of weights." in result.message


def test_the_count_template_fails_with_kind_type_on_a_number_that_is_not_whole():
    source = "def qkv_param_count(d_model, seq_len):\n    return 3 * d_model * d_model + 0.5\n"
    result = judge(attention.check_qkv_param_count_matches_torch, source)
    assert (result.status, result.kind) == ("failed", "type"), result.message
    assert "qkv_param_count(d_model, seq_len) should be a whole number (an int); got" in result.message

    source = "def qkv_param_count(d_model, seq_len):\n    return 3 * d_model * d_model\n"
    assert judge(attention.check_qkv_param_count_matches_torch, source).status == "passed"
