"""Self-checks for the rnn_lm notebook. Run them as often as you like.

Each check tests a property your code must have (agreement with a torch.nn module, causality, what a
probability table must sum to...). When a property fails, hypothesis shrinks the input to a small
example and the check's cell fails with it and what was expected. Passing these checks is a good sign,
not a guarantee: the grader checks more. This file needs only numpy, torch and hypothesis.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selfcheck_base import PropertyFailed, SelfCheckFailed, one_line_checks  # noqa: F401
from selfcheck_base import randn as _randn, require as _require, run as _run

_SETTINGS = settings(max_examples=25, derandomize=True, database=None, deadline=None,
                     suppress_health_check=list(HealthCheck), report_multiple_bugs=False)


def _close(a, b, tol=1e-8) -> bool:
    return isinstance(a, torch.Tensor) and a.shape == b.shape and torch.allclose(a.detach(), b, atol=tol, rtol=1e-6)


sizes = st.integers(1, 3)
seeds = st.integers(0, 999)


# --- 1. LSTM cell ---------------------------------------------------------------------------------------

def check_lstm_cell(lstm_cell) -> bool:
    @_SETTINGS
    @given(sizes, sizes, sizes, seeds)
    def matches_lstm_cell(B, D, H, seed):
        x, h, c = _randn(seed, B, D), _randn(seed + 1, B, H), _randn(seed + 2, B, H)
        W, b = _randn(seed + 3, 4 * H, H + D), _randn(seed + 4, 4 * H)
        blocks = [slice(k * H, (k + 1) * H) for k in range(4)]  # your gate blocks: i, f, o, g
        torch_order = [blocks[k] for k in (0, 1, 3, 2)]  # torch's: i, f, g, o
        cell = torch.nn.LSTMCell(D, H, dtype=torch.float64)
        with torch.no_grad():
            cell.weight_hh.copy_(torch.cat([W[s, :H] for s in torch_order]))
            cell.weight_ih.copy_(torch.cat([W[s, H:] for s in torch_order]))
            cell.bias_ih.copy_(torch.cat([b[s] for s in torch_order]))
            cell.bias_hh.zero_()
            want_h, want_c = cell(x, (h, c))
        out = lstm_cell(x, h, c, W, b)
        _require(isinstance(out, tuple) and len(out) == 2, f"lstm_cell should return (h_next, c_next); got {type(out).__name__}")
        _require(_close(out[1], want_c), f"B={B}, D={D}, H={H}: c_next differs from torch.nn.LSTMCell's "
                                         f"(is the gate order i, f, o, g, and c' = f * c + i * g?)")
        _require(_close(out[0], want_h), f"B={B}, D={D}, H={H}: h_next differs from torch.nn.LSTMCell's (h' = o * tanh(c'))")

    def keeps_memory():
        x, h, c, W, b = _randn(1, 2, 3), _randn(2, 2, 2), _randn(3, 2, 2), _randn(4, 8, 5), _randn(5, 8)
        W[:4], b[:2], b[2:4] = 0.0, -1000.0, 1000.0  # i = 0, f = 1
        _, c_next = lstm_cell(x, h, c, W, b)
        _require(torch.allclose(c_next.detach(), c), "with the input gate at 0 and the forget gate at 1, c_next should equal c")

    def differentiable():
        args = [t.requires_grad_() for t in (_randn(6, 2, 3), _randn(7, 2, 2), _randn(8, 2, 2), _randn(9, 8, 5), _randn(10, 8))]
        h_next, c_next = lstm_cell(*args)
        _require(isinstance(h_next, torch.Tensor) and h_next.requires_grad and c_next.requires_grad,
                 "h_next and c_next should be built from torch operations on the inputs, so autograd can follow them")
        grads = torch.autograd.grad(h_next.sum() + c_next.sum(), args, allow_unused=True)
        missing = [name for name, g in zip(("x", "h", "c", "W", "b"), grads) if g is None]
        _require(not missing, f"no gradient flows back to {', '.join(missing)}")

    return _run("lstm_cell: agrees with torch.nn.LSTMCell (weights mapped)", matches_lstm_cell) & \
        _run("lstm_cell: i = 0 and f = 1 keep the cell unchanged", keeps_memory) & \
        _run("lstm_cell: gradients flow to every input", differentiable)


# --- 2. Recurrent language model ------------------------------------------------------------------------

def _lm(seed, T, V=4, D=2, H=3):
    tokens = torch.from_numpy(np.random.default_rng(seed).integers(0, V, T))
    return [tokens, _randn(seed + 1, V, D), _randn(seed + 2, D, H), _randn(seed + 3, H, H) / 2, _randn(seed + 4, H),
            _randn(seed + 5, H, V), _randn(seed + 6, V)]


def _torch_states(tokens, E, W_xh, W_hh, b_h):
    rnn = torch.nn.RNN(W_xh.shape[0], W_xh.shape[1], nonlinearity="tanh", dtype=torch.float64)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(W_xh.T)
        rnn.weight_hh_l0.copy_(W_hh.T)
        rnn.bias_ih_l0.copy_(b_h)
        rnn.bias_hh_l0.zero_()
        out, _ = rnn(E[tokens][:, None])  # (T, 1, H)
    return out[:, 0]


def check_rnn_lm_states(rnn_lm_states) -> bool:
    @_SETTINGS
    @given(st.integers(1, 6), seeds)
    def matches_rnn(T, seed):
        args = _lm(seed, T)[:5]
        got = rnn_lm_states(*args)
        _require(_close(got, _torch_states(*args)), f"T={T}: the states differ from torch.nn.RNN's (tanh, h before "
                                                    f"the first step = 0, one state per token)")

    @_SETTINGS
    @given(st.integers(2, 6), seeds)
    def causal(T, seed):
        tokens, *weights = _lm(seed, T)[:5]
        changed = tokens.clone()
        changed[-1] = (changed[-1] + 1) % 4
        a, b = rnn_lm_states(tokens, *weights), rnn_lm_states(changed, *weights)
        _require(torch.allclose(a[:-1].detach(), b[:-1].detach(), atol=1e-12),
                 f"T={T}: changing the last token changed earlier states")

    return _run("rnn_lm_states: agrees with torch.nn.RNN", matches_rnn) & \
        _run("rnn_lm_states: a state does not depend on later tokens", causal)


def check_rnn_lm_loss(rnn_lm_loss) -> bool:
    @_SETTINGS
    @given(st.integers(2, 6), seeds)
    def matches_cross_entropy(T, seed):
        args = _lm(seed, T)
        tokens, W_hy, b_y = args[0], args[5], args[6]
        want = F.cross_entropy(_torch_states(*args[:5])[:-1] @ W_hy + b_y, tokens[1:], reduction="sum")
        got = rnn_lm_loss(*args)
        _require(isinstance(got, torch.Tensor) and got.ndim == 0, f"the loss should be a 0-dim tensor; got {got!r}")
        _require(_close(got, want), f"T={T}, tokens={tokens.tolist()}: loss {float(got):.6g}, expected {float(want):.6g} "
                                    f"(summed cross-entropy of tokens[1:] given the logits of h_0..h_(T-2))")

    return _run("rnn_lm_loss: agrees with torch.nn.RNN + F.cross_entropy(reduction='sum')", matches_cross_entropy)


# --- 3. n-grams -----------------------------------------------------------------------------------------

def check_ngram_probs(ngram_probs) -> bool:
    def lecture_example():
        # The lecture's example with other counts: after 'cows eat' come corn 5 times, grass and hay twice, if once.
        tokens = []
        for word, k in (("corn", 5), ("grass", 2), ("hay", 2), ("if", 1)):
            tokens += ["cows", "eat", word] * k
        table = ngram_probs(tokens, 3)
        _require(isinstance(table, dict) and ("cows", "eat") in table,
                 "ngram_probs(tokens, 3) should be a dict with the key ('cows', 'eat')")
        want = {"corn": 5 / 10, "grass": 2 / 10, "hay": 2 / 10, "if": 1 / 10}
        got = table[("cows", "eat")]
        _require(isinstance(got, dict) and got.keys() == want.keys()
                 and all(math.isclose(got[w], p) for w, p in want.items()),
                 f"after 'cows eat' (corn 5 times, grass and hay twice, if once) expected {{'corn': 5/10, 'grass': 2/10, "
                 f"'hay': 2/10, 'if': 1/10}}; got {got}")

    def by_hand():
        tokens = "to be or not to be".split()
        for n, want in ((2, {("to",): {"be": 1.0}, ("be",): {"or": 1.0}, ("or",): {"not": 1.0}, ("not",): {"to": 1.0}}),
                        (3, {("to", "be"): {"or": 1.0}, ("be", "or"): {"not": 1.0}, ("or", "not"): {"to": 1.0},
                             ("not", "to"): {"be": 1.0}})):
            got = ngram_probs(tokens, n)
            _require(got == want, f"ngram_probs({tokens}, {n}) should be {want} (each context is the n - 1 words "
                                  f"before the word it predicts); got {got}")

    @_SETTINGS
    @given(st.lists(st.sampled_from("abc"), min_size=1, max_size=10), st.integers(1, 3))
    def sums_to_one(tokens, n):
        for context, following in ngram_probs(tokens, n).items():
            _require(isinstance(context, tuple) and len(context) == n - 1,
                     f"ngram_probs({tokens}, {n}): the key {context!r} should be a tuple of {n - 1} words")
            _require(math.isclose(sum(following.values()), 1.0),
                     f"ngram_probs({tokens}, {n}): the probabilities after {context} sum to {sum(following.values())}")

    return _run("ngram_probs: a 'cows eat' example like the lecture's", lecture_example) & \
        _run("ngram_probs: 'to be or not to be' by hand", by_hand) & \
        _run("ngram_probs: each context's probabilities sum to 1", sums_to_one)


def check_sequence_log_prob(sequence_log_prob) -> bool:
    probs = {("a",): {"b": 0.5, "c": 0.5}, ("b",): {"a": 1.0}, ("c",): {"a": 0.25, "b": 0.75}}

    def chain_rule():
        got = sequence_log_prob(["a", "c", "b", "a"], probs)
        want = math.log(0.5) + math.log(0.75) + math.log(1.0)
        _require(isinstance(got, (int, float)) and math.isclose(got, want),
                 f"sequence_log_prob(['a', 'c', 'b', 'a'], probs) = {got!r}; expected ln 0.5 + ln 0.75 + ln 1 = {want:.6g}")
        _require(sequence_log_prob(["b"], probs) == 0, "a one-token sentence has nothing to score: expected 0")

    def unseen():
        for sentence in (["b", "c"], ["a", "d"], ["d", "a"]):
            got = sequence_log_prob(sentence, probs)
            _require(got == float("-inf"), f"sequence_log_prob({sentence}, probs) = {got!r}; expected -inf")

    return _run("sequence_log_prob: sums ln P(word | previous word)", chain_rule) & \
        _run("sequence_log_prob: -inf for an unseen bigram or context", unseen)


# --- 4. Encoder-decoder attention -----------------------------------------------------------------------

def check_encoder_decoder_context(encoder_decoder_context) -> bool:
    @_SETTINGS
    @given(sizes, st.integers(1, 4), sizes, seeds)
    def properties(T_dec, T_enc, d, seed):
        S, H = _randn(seed, T_dec, d), _randn(seed + 1, T_enc, d)
        C = encoder_decoder_context(S, H)
        _require(isinstance(C, torch.Tensor) and C.shape == (T_dec, d), f"expected shape ({T_dec}, {d}); got {getattr(C, 'shape', None)}")
        want = F.scaled_dot_product_attention(S[None], H[None], H[None], scale=1.0)[0]
        _require(_close(C, want), f"T_dec={T_dec}, T_enc={T_enc}, d={d}: C differs from softmax(S H^T) H")
        same = H[:1].repeat(T_enc, 1)
        _require(_close(encoder_decoder_context(S, same), H[:1].repeat(T_dec, 1)),
                 "when every encoder state is the same vector v, every context vector should be v")
        perm = torch.arange(T_enc).flip(0)
        _require(_close(encoder_decoder_context(S, H[perm]), C.detach()), "reversing the encoder states changed C")

    return _run("encoder_decoder_context: softmax(S H^T) H, convex weights, encoder order", properties)


# --- 5. Causal convolutions -----------------------------------------------------------------------------

def check_causal_conv1d(causal_conv1d) -> bool:
    @_SETTINGS
    @given(st.integers(1, 3), st.integers(1, 3), seeds)
    def impulse_response(K, dilation, seed):
        w = _randn(seed, K)
        T = (K - 1) * dilation + 3
        x = torch.zeros(T, dtype=torch.float64)
        x[0] = 1.0
        y = causal_conv1d(x, w, dilation)
        want = torch.zeros(T, dtype=torch.float64)
        want[torch.arange(K) * dilation] = w
        _require(_close(y, want), f"an impulse x = {x.tolist()} with w = {np.round(w.numpy(), 3).tolist()}, dilation = "
                                  f"{dilation} should give y[k * dilation] = w[k]; got {np.round(y.detach().numpy(), 3).tolist()}")

    @_SETTINGS
    @given(st.integers(2, 8), st.integers(1, 3), st.integers(1, 3), seeds)
    def causal(T, K, dilation, seed):
        x, w = _randn(seed, T), _randn(seed + 1, K)
        x2 = x.clone()
        x2[-1] += 1.0
        a, b = causal_conv1d(x, w, dilation), causal_conv1d(x2, w, dilation)
        _require(torch.allclose(a[:-1].detach(), b[:-1].detach(), atol=1e-12),
                 f"T={T}, K={K}, dilation={dilation}: changing the last input changed earlier outputs")

    return _run("causal_conv1d: impulse response y[k * dilation] = w[k]", impulse_response) & \
        _run("causal_conv1d: outputs do not depend on later inputs", causal)


def check_receptive_field(receptive_field) -> bool:
    @_SETTINGS
    @given(st.integers(1, 4), st.lists(st.sampled_from([1, 2, 4]), min_size=1, max_size=3))
    def measured(K, dilations):
        x = torch.zeros(64, dtype=torch.float64, requires_grad=True)
        y = x
        for d in dilations:  # a stack of causal convolutions with all-ones kernels
            y = F.conv1d(F.pad(y[None, None], ((K - 1) * d, 0)), torch.ones(1, 1, K, dtype=torch.float64), dilation=d)[0, 0]
        (grad,) = torch.autograd.grad(y[-1], x)
        seen = torch.nonzero(grad).flatten()
        want = int(seen.max() - seen.min()) + 1
        got = receptive_field(K, dilations)
        _require(got == want, f"receptive_field({K}, {dilations}) = {got!r}; the last output of such a stack depends "
                              f"on {want} consecutive inputs")

    return _run("receptive_field: agrees with a measured stack of convolutions", measured)


one_line_checks(globals())
