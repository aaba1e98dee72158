"""recurrent_unit, forward and ar_as_recurrent against torch.nn.RNN and an AR convolution."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import reference.recurrent as recurrent_module
from reference import ar_as_recurrent, forward, recurrent_unit

dims = st.integers(1, 6)


def _rnn_oracle(Wrec, Win):
    """A ReLU nn.RNN without bias carrying the given weights (an independent implementation)."""
    d_h, d_in = Win.shape
    rnn = torch.nn.RNN(d_in, d_h, nonlinearity="relu", bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(Win)
        rnn.weight_hh_l0.copy_(Wrec)
    return rnn


def _randn(gen, *shape):
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


@given(B=dims, d_in=dims, d_h=dims, seed=st.integers(0, 2**16), batched=st.booleans())
def test_recurrent_unit_matches_nn_rnn_values_and_gradients(B, d_in, d_h, seed, batched):
    gen = torch.Generator().manual_seed(seed)
    x, h = _randn(gen, B, d_in), _randn(gen, B, d_h)
    Wrec, Win = _randn(gen, d_h, d_h), _randn(gen, d_h, d_in)
    if not batched:
        x, h = x[0], h[0]
    args = [t.clone().requires_grad_() for t in (x, h, Wrec, Win)]
    got = recurrent_unit(*args)
    rnn = _rnn_oracle(Wrec, Win)
    xo, ho = x.clone().requires_grad_(), h.clone().requires_grad_()
    _, h_next = rnn(xo.reshape(-1, 1, d_in), ho.reshape(1, -1, d_h))  # one time step
    want = h_next.reshape(h.shape)
    assert got.shape == h.shape
    torch.testing.assert_close(got, want)
    cot = _randn(gen, *h.shape)
    g_got = torch.autograd.grad((got * cot).sum(), args)
    g_want = torch.autograd.grad((want * cot).sum(), [xo, ho, rnn.weight_hh_l0, rnn.weight_ih_l0])
    for a, b in zip(g_got, g_want):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize(
    "shapes",
    [
        [(2, 3), (2, 4), (4, 5), (4, 3)],  # Wrec not square
        [(2, 3), (2, 4), (4, 4), (4, 2)],  # Win columns != d_in
        [(2, 3), (3, 4), (4, 4), (4, 3)],  # batch sizes differ
        [(3,), (2, 4), (4, 4), (4, 3)],  # batched h with unbatched x
    ],
)
def test_recurrent_unit_rejects_mismatched_shapes(shapes):
    with pytest.raises(ValueError, match="shape"):
        recurrent_unit(*[torch.zeros(s) for s in shapes])


@given(B=dims, T=st.integers(0, 7), d_in=dims, d_h=dims, seed=st.integers(0, 2**16))
def test_forward_matches_nn_rnn_then_readout(B, T, d_in, d_h, seed):
    gen = torch.Generator().manual_seed(seed)
    seqs, Wrec, Win, Wout = _randn(gen, B, T, d_in), _randn(gen, d_h, d_h), _randn(gen, d_h, d_in), _randn(gen, d_h, 1)
    args = [t.clone().requires_grad_() for t in (seqs, Wrec, Win, Wout)]
    got = forward(*args)
    rnn = _rnn_oracle(Wrec, Win)
    so, wo = seqs.clone().requires_grad_(), Wout.clone().requires_grad_()
    if T == 0:
        want = torch.zeros(B, dtype=torch.float64)
    else:
        _, h_T = rnn(so)  # h_T: (1, B, d_h)
        want = (h_T[0] @ wo)[:, 0]  # (B,)
    assert got.shape == (B,)
    torch.testing.assert_close(got, want)
    if T > 0:
        cot = _randn(gen, B)
        g_got = torch.autograd.grad((got * cot).sum(), args)
        g_want = torch.autograd.grad((want * cot).sum(), [so, rnn.weight_hh_l0, rnn.weight_ih_l0, wo])
        for a, b in zip(g_got, g_want):
            torch.testing.assert_close(a, b)


def test_forward_calls_recurrent_unit_once_per_time_step_for_the_whole_batch(monkeypatch):
    calls = []
    original = recurrent_module.recurrent_unit

    def counting(x, h, Wrec, Win):
        calls.append(tuple(x.shape))
        return original(x, h, Wrec, Win)

    monkeypatch.setattr(recurrent_module, "recurrent_unit", counting)
    forward(torch.randn(5, 7, 3), torch.randn(4, 4), torch.randn(4, 3), torch.randn(4, 1))
    assert calls == [(5, 3)] * 7


@pytest.mark.parametrize(
    "shapes", [[(5, 3), (4, 4), (4, 3), (4, 1)], [(2, 5, 3), (4, 4), (4, 3), (4,)], [(2, 5, 3), (4, 4), (4, 3), (3, 1)]]
)
def test_forward_rejects_bad_shapes(shapes):
    with pytest.raises(ValueError, match="shape"):
        forward(*[torch.zeros(s) for s in shapes])


@given(w=st.lists(st.floats(-3, 3), min_size=1, max_size=6), x=st.lists(st.floats(-3, 3), min_size=1, max_size=12))
def test_ar_as_recurrent_reproduces_the_ar_model(w, x):
    Wrec, win, wout = ar_as_recurrent(np.array(w))
    h = torch.zeros(Wrec.shape[0], dtype=torch.float64)
    outputs = []
    for value in x:
        h = Wrec @ h + win * value
        outputs.append(float(wout @ h))
    # y(t) = sum_k w[k] x(t - s + 1 + k), w oldest first, x = 0 before the start
    want = [sum(w[k] * x[t - len(w) + 1 + k] for k in range(len(w)) if t - len(w) + 1 + k >= 0) for t in range(len(x))]
    np.testing.assert_allclose(outputs, want, rtol=1e-9, atol=1e-9)


def test_ar_fit_weights_feed_ar_as_recurrent():
    """ar_fit's weights (less the bias) are ar_as_recurrent's: after x(t) the unit predicts x(t+1) - b."""
    from reference import ar_fit

    seq = np.array([0.3, -1.2, 2.0, 0.7, -0.4, 1.1, 0.9, -2.2, 0.5, 1.6])
    s = 3
    w = ar_fit(seq, s)
    Wrec, win, wout = ar_as_recurrent(w[:-1])
    h = torch.zeros(s, dtype=torch.float64)
    for t, value in enumerate(seq[:-1]):
        h = Wrec @ h + win * value
        if t >= s - 1:  # a whole window seq[t-s+1 .. t] has been read
            np.testing.assert_allclose(float(wout @ h) + w[-1], seq[t - s + 1 : t + 1] @ w[:-1] + w[-1], rtol=1e-12)


def test_ar_as_recurrent_rejects_an_empty_model():
    with pytest.raises(ValueError, match="at least one"):
        ar_as_recurrent([])
