"""reference.rnn_lm against independent oracles: torch.nn.LSTMCell, nn.RNN + F.cross_entropy, F.conv1d,
nn.LSTM's parameter count, collections.Counter and the definitions written out as loops."""

import math
from collections import Counter

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from reference import rnn_lm

seeds = st.integers(0, 2**16)


def randn(gen, *shape):
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


def lstm_inputs(seed, B, D, H):
    gen = torch.Generator().manual_seed(seed)
    return randn(gen, B, D), randn(gen, B, H), randn(gen, B, H), randn(gen, 4 * H, H + D), randn(gen, 4 * H)


@given(seed=seeds, B=st.integers(1, 4), D=st.integers(1, 5), H=st.integers(1, 5))
def test_lstm_cell_matches_torch_lstm_cell(seed, B, D, H):
    x, h, c, W, b = lstm_inputs(seed, B, D, H)
    # torch.nn.LSTMCell built here from the layout its documentation gives: gates (i, f, g, o).
    cell = torch.nn.LSTMCell(D, H, dtype=torch.float64)
    i, f, o, g = (slice(k * H, (k + 1) * H) for k in range(4))
    with torch.no_grad():
        cell.weight_hh.copy_(torch.cat([W[s, :H] for s in (i, f, g, o)]))
        cell.weight_ih.copy_(torch.cat([W[s, H:] for s in (i, f, g, o)]))
        cell.bias_ih.copy_(torch.cat([b[s] for s in (i, f, g, o)]))
        cell.bias_hh.zero_()
        want = cell(x, (h, c))
    for got in (rnn_lm.lstm_cell(x, h, c, W, b), rnn_lm.lstm_cell_torch(x, h, c, W, b)):
        torch.testing.assert_close(got[0], want[0])
        torch.testing.assert_close(got[1], want[1])


def test_lstm_cell_gradients_match_torch():
    x, h, c, W, b = (t.requires_grad_() for t in lstm_inputs(3, 2, 3, 4))
    got = rnn_lm.lstm_cell(x, h, c, W, b)
    w_ih, w_hh, b_ih, b_hh = rnn_lm.lstm_weights_to_torch(W, b, 4)
    want = torch._VF.lstm_cell(x, (h, c), w_ih, w_hh, b_ih, b_hh)
    leaves = (x, h, c, W, b)
    for a, e in zip(
        torch.autograd.grad(sum(o.sum() for o in got), leaves), torch.autograd.grad(sum(o.sum() for o in want), leaves)
    ):
        torch.testing.assert_close(a, e)


def test_lstm_forget_one_input_zero_keeps_the_cell():
    x, h, c, W, b = lstm_inputs(1, 2, 3, 4)
    W[:8] = 0
    b[:4], b[4:8] = -1000.0, 1000.0  # i = 0, f = 1 exactly
    assert torch.equal(rnn_lm.lstm_cell(x, h, c, W, b)[1], c)


def lm_inputs(seed, T, V, D, H):
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, V, (T,), generator=gen)
    return [
        tokens,
        randn(gen, V, D),
        randn(gen, D, H),
        randn(gen, H, H) / 2,
        randn(gen, H),
        randn(gen, H, V),
        randn(gen, V),
    ]


@given(seed=seeds, T=st.integers(2, 8), V=st.integers(2, 6), D=st.integers(1, 4), H=st.integers(1, 5))
def test_rnn_lm_loss_matches_nn_rnn_and_summed_cross_entropy(seed, T, V, D, H):
    args = lm_inputs(seed, T, V, D, H)
    tokens, E, W_xh, W_hh, b_h, W_hy, b_y = args
    rnn = torch.nn.RNN(D, H, nonlinearity="tanh", dtype=torch.float64)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(W_xh.T)
        rnn.weight_hh_l0.copy_(W_hh.T)
        rnn.bias_ih_l0.copy_(b_h)
        rnn.bias_hh_l0.zero_()
        states, _ = rnn(E[tokens][:, None])  # (T, 1, H), the state before the first step is 0
    torch.testing.assert_close(rnn_lm.rnn_lm_states(*args[:5]), states[:, 0])
    want = F.cross_entropy(states[:-1, 0] @ W_hy + b_y, tokens[1:], reduction="sum")
    got = rnn_lm.rnn_lm_loss(*args)
    assert got.ndim == 0
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(rnn_lm.rnn_lm_loss_torch(*args), want)


def test_rnn_lm_loss_gradients_match_nn_rnn():
    tokens, *weights = lm_inputs(5, 6, 4, 3, 3)
    weights = [w.requires_grad_() for w in weights]
    got = torch.autograd.grad(rnn_lm.rnn_lm_loss(tokens, *weights), weights)
    E, W_xh, W_hh, b_h, W_hy, b_y = weights
    rnn = torch.nn.RNN(3, 3, nonlinearity="tanh", bias=False, dtype=torch.float64)
    states, _ = torch._VF.rnn_tanh(
        E[tokens][:, None],
        torch.zeros(1, 1, 3, dtype=torch.float64),
        [W_xh.T, W_hh.T, b_h, torch.zeros_like(b_h)],
        True,
        1,
        0.0,
        False,
        False,
        False,
    )
    want = torch.autograd.grad(F.cross_entropy(states[:-1, 0] @ W_hy + b_y, tokens[1:], reduction="sum"), weights)
    del rnn
    for a, e in zip(got, want):
        torch.testing.assert_close(a, e)


@given(seed=seeds, T=st.integers(2, 7), j=st.integers(0, 6))
def test_rnn_lm_states_are_causal(seed, T, j):
    tokens, E, W_xh, W_hh, b_h, *_ = lm_inputs(seed, T, 5, 3, 4)
    j = j % T
    changed = tokens.clone()
    changed[j] = (changed[j] + 1) % 5
    a, b = rnn_lm.rnn_lm_states(tokens, E, W_xh, W_hh, b_h), rnn_lm.rnn_lm_states(changed, E, W_xh, W_hh, b_h)
    assert torch.equal(a[:j], b[:j])
    assert not torch.equal(a[j], b[j])


words = st.lists(st.sampled_from(["cows", "eat", "corn", "grass", "hay", "if", "which"]), min_size=0, max_size=30)


@given(tokens=words, n=st.integers(1, 4))
def test_ngram_probs_match_counter(tokens, n):
    grams = Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    contexts = Counter()
    for gram, k in grams.items():
        contexts[gram[:-1]] += k
    want = {}
    for gram, k in grams.items():
        want.setdefault(gram[:-1], {})[gram[-1]] = k / contexts[gram[:-1]]
    got = rnn_lm.ngram_probs(tokens, n)
    assert got.keys() == want.keys()
    for context, following in want.items():
        assert got[context].keys() == following.keys()
        assert all(type(p) is float and math.isclose(p, following[w]) for w, p in got[context].items())
        assert math.isclose(sum(got[context].values()), 1.0)


def test_ngram_probs_lecture_example():
    tokens = []
    for word, k in (("corn", 4), ("grass", 3), ("hay", 2), ("if", 1), ("which", 1)):
        tokens += ["cows", "eat", word] * k
    got = rnn_lm.ngram_probs(tokens, 3)[("cows", "eat")]
    assert got == pytest.approx({"corn": 4 / 11, "grass": 3 / 11, "hay": 2 / 11, "if": 1 / 11, "which": 1 / 11})


@given(
    tokens=st.lists(st.sampled_from("abcd"), min_size=1, max_size=12),
    train=st.lists(st.sampled_from("abcd"), min_size=2, max_size=30),
)
def test_sequence_log_prob_is_the_chain_rule_product(tokens, train):
    probs = rnn_lm.ngram_probs(train, 2)
    p = 1.0
    for prev, word in zip(tokens, tokens[1:]):
        p *= probs.get((prev,), {}).get(word, 0.0)
    got = rnn_lm.sequence_log_prob(tokens, probs)
    assert got == -math.inf if p == 0 else math.isclose(got, math.log(p))


@given(seed=seeds, T_dec=st.integers(1, 5), T_enc=st.integers(1, 6), d=st.integers(1, 4))
def test_encoder_decoder_context_matches_sdpa_without_scaling(seed, T_dec, T_enc, d):
    gen = torch.Generator().manual_seed(seed)
    S, H = randn(gen, T_dec, d), randn(gen, T_enc, d)
    want = F.scaled_dot_product_attention(S[None], H[None], H[None], scale=1.0)[0]
    torch.testing.assert_close(rnn_lm.encoder_decoder_context(S, H), want)


@given(seed=seeds, T=st.integers(1, 12), K=st.integers(1, 4), dilation=st.integers(1, 4))
def test_causal_conv1d_matches_the_definition(seed, T, K, dilation):
    gen = torch.Generator().manual_seed(seed)
    x, w = randn(gen, T), randn(gen, K)
    want = torch.zeros(T, dtype=torch.float64)
    for t in range(T):
        for k in range(K):
            if t - k * dilation >= 0:
                want[t] += w[k] * x[t - k * dilation]
    torch.testing.assert_close(rnn_lm.causal_conv1d(x, w, dilation), want)


@given(K=st.integers(1, 4), dilations=st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=4))
def test_receptive_field_is_measured_on_a_stack_of_causal_convolutions(K, dilations):
    field = rnn_lm.receptive_field(K, dilations)
    T = field + 4
    x = torch.zeros(T, dtype=torch.float64, requires_grad=True)
    y = x
    for d in dilations:
        y = rnn_lm.causal_conv1d(y, torch.ones(K, dtype=torch.float64), d)
    (grad,) = torch.autograd.grad(y[-1], x)
    seen = torch.nonzero(grad).flatten()  # the inputs the last output depends on
    assert int(seen.max() - seen.min()) + 1 == field  # the span from the oldest to the newest


@pytest.mark.parametrize("D, H", [(1, 1), (3, 7), (10, 20)])
def test_lstm_param_count_matches_nn_lstm(D, H):
    assert rnn_lm.lstm_param_count(D, H) == sum(p.numel() for p in torch.nn.LSTM(D, H).parameters())


def test_answer_keys():
    assert rnn_lm.LSTM_PARAM_COUNT == sum(p.numel() for p in torch.nn.LSTM(*rnn_lm.LSTM_PARAM_SIZES).parameters())
    assert rnn_lm.TEACHER_FORCING_PARALLEL in ("A", "B", "C", "D")


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError):
        rnn_lm.ngram_probs(["a"], 0)
    with pytest.raises(ValueError):
        rnn_lm.causal_conv1d(torch.zeros(3), torch.zeros(2), 0)
    with pytest.raises(ValueError):
        rnn_lm.rnn_lm_loss(torch.tensor([1]), *lm_inputs(0, 2, 3, 2, 2)[1:])
    assert np.isfinite(rnn_lm.sequence_log_prob(["a"], {}))
