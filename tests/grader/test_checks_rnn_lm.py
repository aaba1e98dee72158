"""The rnn_lm checks: each fails on a plausible wrong implementation and passes on a correct one of another form.

Student code runs in-process (through the codec, stand-ins included), judged as in a real grade. The
notebook's locked cell of n-gram readers is taken from the source notebook itself, so these tests
exercise exactly the functions the grader calls.
"""

import nbformat

from grader.assignments.registry import get_assignment
from grader.course.release import ASSIGNMENTS_ROOT
from grader.notebook import grade_id as grade_id_of

from .check_table import CheckTable

RNN_LM = get_assignment("rnn_lm")
NOTEBOOK = nbformat.read(ASSIGNMENTS_ROOT / "source" / "rnn_lm" / "rnn_lm.ipynb", as_version=4)


def _cell(grade_id: str) -> str:
    return next(c.source for c in NOTEBOOK.cells if grade_id_of(c) == grade_id)


# Written as a student would, in other forms than reference/rnn_lm.py.
SOLUTION = r"""
import math
from collections import Counter

import numpy as np
import torch
import torch.nn.functional as F


def lstm_cell(x, h, c, W, b):
    H = h.shape[1]
    z = torch.cat([h, x], dim=1) @ W.T + b
    i = torch.sigmoid(z[:, :H])
    f = torch.sigmoid(z[:, H:2 * H])
    o = torch.sigmoid(z[:, 2 * H:3 * H])
    g = torch.tanh(z[:, 3 * H:])
    c_next = f * c + i * g
    return o * torch.tanh(c_next), c_next


def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):
    h = torch.zeros(W_hh.shape[0], dtype=E.dtype)
    out = []
    for t in range(len(tokens)):
        h = torch.tanh(E[tokens[t]] @ W_xh + h @ W_hh + b_h)
        out.append(h)
    return torch.stack(out)


def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):
    logits = rnn_lm_states(tokens, E, W_xh, W_hh, b_h)[:-1] @ W_hy + b_y
    return F.cross_entropy(logits, tokens[1:], reduction="sum")


def ngram_probs(tokens, n):
    grams = Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    totals = Counter()
    for gram, k in grams.items():
        totals[gram[:-1]] += k
    table = {}
    for gram, k in grams.items():
        table.setdefault(gram[:-1], {})[gram[-1]] = k / totals[gram[:-1]]
    return table


def sequence_log_prob(tokens, probs):
    total = 0.0
    for prev, word in zip(tokens, tokens[1:]):
        p = probs.get((prev,), {}).get(word, 0.0)
        if p == 0:
            return float("-inf")
        total += math.log(p)
    return total


def encoder_decoder_context(S, H):
    return torch.softmax(S @ H.T, dim=-1) @ H


def causal_conv1d(x, w, dilation):
    K = len(w)
    xp = F.pad(x, ((K - 1) * dilation, 0))
    return F.conv1d(xp[None, None], w.flip(0)[None, None], dilation=dilation)[0, 0]


def receptive_field(kernel_size, dilations):
    return 1 + (kernel_size - 1) * sum(dilations)


TEACHER_FORCING_PARALLEL = "B"
LSTM_PARAM_COUNT = 2560
"""

# check name -> (replacement code appended after the solution, words the failure message must contain)
WRONG = {
    "check_lstm_cell_shapes": (
        """
_lstm = lstm_cell
def lstm_cell(x, h, c, W, b):
    return _lstm(x, h, c, W, b)[0]  # only h_next
""",
        ["tuple"],
    ),
    "check_lstm_cell_matches_torch": (
        """
def lstm_cell(x, h, c, W, b):
    H = h.shape[1]
    i, f, g, o = (torch.cat([h, x], dim=1) @ W.T + b).split(H, dim=1)  # torch's order (i, f, g, o)
    c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_next), c_next
""",
        ["values differ", "gate order"],
    ),
    "check_lstm_cell_keeps_memory": (
        """
def lstm_cell(x, h, c, W, b):
    H = h.shape[1]
    i, f, o, g = (torch.cat([h, x], dim=1) @ W.T + b).split(H, dim=1)
    c_next = torch.sigmoid(f) * torch.tanh(g) + torch.sigmoid(i) * c  # forget gate on g
    return torch.sigmoid(o) * torch.tanh(c_next), c_next
""",
        ["c_next", "i = 0 and f = 1"],
    ),
    "check_lstm_cell_batch_permutation_equivariance": (
        """
_lstm = lstm_cell
def lstm_cell(x, h, c, W, b):
    h2, c2 = _lstm(x, h, c, W, b)
    return h2, c2 + 0.1 * torch.arange(len(c2), dtype=c2.dtype)[:, None]  # depends on the place in the batch
""",
        ["reordered"],
    ),
    "check_lstm_cell_gradients": (
        """
_lstm = lstm_cell
def lstm_cell(x, h, c, W, b):
    h2, c2 = _lstm(x, h.detach(), c, W, b)  # no gradient reaches h
    return h2, c2
""",
        ["gradient", "with respect to h"],
    ),
    "check_rnn_lm_states_shape": (
        """
_states = rnn_lm_states
def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):
    return _states(tokens, E, W_xh, W_hh, b_h)[:, None]  # (T, 1, H)
""",
        ["shape"],
    ),
    "check_rnn_lm_states_values": (
        """
def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):
    h, out = torch.zeros(W_hh.shape[0], dtype=E.dtype), []
    for t in range(len(tokens)):
        h = torch.tanh(E[tokens[t]] @ W_xh + h @ W_hh.T + b_h)
        out.append(h)
    return torch.stack(out)
""",
        ["values differ", "transpose"],
    ),
    "check_rnn_lm_states_causality": (
        """
def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):
    h, out = torch.zeros(W_hh.shape[0], dtype=E.dtype), []
    everything = E[tokens].mean(dim=0) @ W_xh  # peeks at the whole sequence
    for t in range(len(tokens)):
        h = torch.tanh(E[tokens[t]] @ W_xh + h @ W_hh + b_h + everything)
        out.append(h)
    return torch.stack(out)
""",
        ["earlier position"],
    ),
    "check_rnn_lm_states_gradients": (
        """
def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):
    h, out = torch.zeros(W_hh.shape[0], dtype=E.dtype), []
    for t in range(len(tokens)):
        h = torch.tanh(E[tokens[t]] @ W_xh + h.detach() @ W_hh + b_h)  # cuts backpropagation through time
        out.append(h)
    return torch.stack(out)
""",
        ["gradient"],
    ),
    "check_rnn_lm_loss_is_scalar": (
        """
def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):
    logits = rnn_lm_states(tokens, E, W_xh, W_hh, b_h)[:-1] @ W_hy + b_y
    return F.cross_entropy(logits, tokens[1:], reduction="none")  # one loss per position
""",
        ["shape"],
    ),
    "check_rnn_lm_loss_matches_torch": (
        """
def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):
    logits = rnn_lm_states(tokens, E, W_xh, W_hh, b_h)[:-1] @ W_hy + b_y
    return F.cross_entropy(logits, tokens[1:])  # the mean, not the sum
""",
        ["values differ", "not their mean"],
    ),
    "check_rnn_lm_loss_gradients": (
        """
def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):
    logits = rnn_lm_states(tokens, E, W_xh, W_hh, b_h)[:-1] @ W_hy + b_y
    return torch.tensor(F.cross_entropy(logits, tokens[1:], reduction="sum").item(), dtype=E.dtype)
""",
        ["not differentiable"],
    ),
    "check_ngram_probs_structure": (
        """
_ngrams = ngram_probs
def ngram_probs(tokens, n):
    return {' '.join(k): v for k, v in _ngrams(tokens, n).items()}
""",
        ["tuple"],
    ),
    "check_ngram_probs_matches_counts": (
        """
_ngrams = ngram_probs
def ngram_probs(tokens, n):
    return _ngrams(tokens[:-1], n)  # the last n-gram is not counted
""",
        ["last n-gram"],
    ),
    "check_ngram_probs_sum_to_one": (
        """
def ngram_probs(tokens, n):
    grams = Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    table = {}
    for gram, k in grams.items():
        table.setdefault(gram[:-1], {})[gram[-1]] = k / sum(grams.values())  # the whole corpus
    return table
""",
        ["sum to 1"],
    ),
    "check_sequence_log_prob_values": (
        """
def sequence_log_prob(tokens, probs):
    p = 1.0
    for prev, word in zip(tokens, tokens[1:]):
        p *= probs.get((prev,), {}).get(word, 0.0)
    return p  # the probability, not its log
""",
        ["should be", "sum of the logs"],
    ),
    "check_sequence_log_prob_unseen_is_minus_inf": (
        """
def sequence_log_prob(tokens, probs):
    return sum(math.log(probs[(a,)][b]) for a, b in zip(tokens, tokens[1:]) if b in probs.get((a,), {}))
""",
        ["-inf"],
    ),
    "check_encoder_decoder_context_shape": (
        """
def encoder_decoder_context(S, H):
    return torch.softmax(S @ H.T, dim=-1)  # the weights, not the context
""",
        ["shape"],
    ),
    "check_encoder_decoder_context_values": (
        """
def encoder_decoder_context(S, H):
    return torch.softmax(S @ H.T / S.shape[1] ** 0.5, dim=-1) @ H
""",
        ["values differ", "1/sqrt(d)"],
    ),
    "check_encoder_decoder_context_weights_sum_to_one": (
        """
def encoder_decoder_context(S, H):
    return torch.exp(S @ H.T) @ H  # weights not normalised
""",
        ["same vector v"],
    ),
    "check_encoder_decoder_context_encoder_order": (
        """
def encoder_decoder_context(S, H):
    scores = S @ H.T + torch.arange(H.shape[0], dtype=S.dtype)  # favours later encoder positions
    return torch.softmax(scores, dim=-1) @ H
""",
        ["reordered"],
    ),
    "check_causal_conv1d_shape": (
        """
def causal_conv1d(x, w, dilation):
    K = len(w)
    return F.conv1d(F.pad(x, ((K - 1) * dilation, 0))[None, None], w.flip(0)[None, None], dilation=dilation)
""",
        ["shape"],
    ),
    "check_causal_conv1d_values": (
        """
def causal_conv1d(x, w, dilation):
    K = len(w)
    return F.conv1d(F.pad(x, ((K - 1) * dilation, 0))[None, None], w[None, None], dilation=dilation)[0, 0]
""",
        ["values differ", "flip"],
    ),
    "check_causal_conv1d_causality": (
        """
def causal_conv1d(x, w, dilation):
    K = len(w)
    return F.conv1d(F.pad(x, (0, (K - 1) * dilation))[None, None], w.flip(0)[None, None], dilation=dilation)[0, 0]
""",
        ["earlier output"],
    ),
    "check_causal_conv1d_gradients": (
        """
_conv = causal_conv1d
def causal_conv1d(x, w, dilation):
    return _conv(x, w.detach(), dilation)
""",
        ["gradient", "with respect to w"],
    ),
    "check_receptive_field_values": (
        """
def receptive_field(kernel_size, dilations):
    return (kernel_size - 1) * sum(dilations)
""",
        ["consecutive inputs", "current input"],
    ),
    "check_answer_teacher_forcing_parallel": ('TEACHER_FORCING_PARALLEL = "A"', ["not right"]),
    "check_answer_lstm_param_count": ("LSTM_PARAM_COUNT = 2480", ["not right"]),
}


TABLE = CheckTable(RNN_LM, SOLUTION, WRONG)
ALL_CHECKS = TABLE.checks
judged = TABLE.judged
_student = TABLE.student
test_every_check_has_a_wrong_implementation = TABLE.test_every_check_has_a_wrong_implementation
test_check_passes_on_a_correct_solution = TABLE.test_check_passes_on_a_correct_solution
test_check_fails_on_a_wrong_implementation = TABLE.test_check_fails_on_a_wrong_implementation
