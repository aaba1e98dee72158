"""causal_mask, masked_self_attention and parameter counts against numpy, SDPA and torch.nn modules."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from reference import answers, causal_mask, masked_self_attention, mha_param_count, qkv_param_count


@given(T=st.integers(1, 40))
def test_causal_mask_matches_numpy_triu(T):
    want = np.where(np.triu(np.ones((T, T)), k=1) == 1, -np.inf, 0.0)
    got = causal_mask(T)
    assert got.shape == (T, T) and got.dtype.is_floating_point
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("T, exc", [(0, ValueError), (-3, ValueError), (2.0, TypeError), ("4", TypeError)])
def test_causal_mask_rejects_bad_lengths(T, exc):
    with pytest.raises(exc, match="T"):
        causal_mask(T)


@given(
    B=st.integers(1, 3),
    T=st.integers(1, 9),
    d=st.integers(1, 8),
    d_k=st.integers(1, 8),
    d_v=st.integers(1, 8),
    seed=st.integers(0, 2**16),
    batched=st.booleans(),
)
def test_masked_self_attention_matches_sdpa_in_fp64(B, T, d, d_k, d_v, seed, batched):
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(B, T, d, generator=gen, dtype=torch.float64)
    Wq, Wk = (torch.randn(d, d_k, generator=gen, dtype=torch.float64) for _ in range(2))
    Wv = torch.randn(d, d_v, generator=gen, dtype=torch.float64)
    want = F.scaled_dot_product_attention(X @ Wq, X @ Wk, X @ Wv, is_causal=True)  # scale 1/sqrt(d_k)
    if not batched:
        X, want = X[0], want[0]
    got = masked_self_attention(X, Wq, Wk, Wv)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want)


def test_masked_self_attention_gradients_match_sdpa():
    gen = torch.Generator().manual_seed(0)
    X, Wq, Wk, Wv = (
        torch.randn(*s, generator=gen, dtype=torch.float64, requires_grad=True)
        for s in [(2, 5, 4), (4, 3), (4, 3), (4, 2)]
    )
    got = masked_self_attention(X, Wq, Wk, Wv)
    want = F.scaled_dot_product_attention(X @ Wq, X @ Wk, X @ Wv, is_causal=True)
    for a, b in zip(torch.autograd.grad(got.sum(), (X, Wq, Wk, Wv)), torch.autograd.grad(want.sum(), (X, Wq, Wk, Wv))):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize(
    "shapes", [[(4,), (4, 2), (4, 2), (4, 2)], [(3, 4), (5, 2), (4, 2), (4, 2)], [(3, 4), (4, 2), (4, 3), (4, 2)]]
)
def test_masked_self_attention_rejects_bad_shapes(shapes):
    with pytest.raises(ValueError, match="shape"):
        masked_self_attention(*[torch.zeros(s) for s in shapes])


@given(d_model=st.integers(1, 64), seq_len=st.integers(1, 50))
def test_qkv_param_count_matches_three_linear_layers(d_model, seq_len):
    layers = [torch.nn.Linear(d_model, d_model, bias=False) for _ in range(3)]
    assert qkv_param_count(d_model, seq_len) == sum(p.numel() for layer in layers for p in layer.parameters())


@given(head_dim=st.integers(1, 16), n_heads=st.integers(1, 8), bias=st.booleans())
def test_mha_param_count_matches_nn_multihead_attention(head_dim, n_heads, bias):
    d_model = head_dim * n_heads
    mha = torch.nn.MultiheadAttention(d_model, n_heads, bias=bias)
    assert mha_param_count(d_model, n_heads, bias=bias) == sum(p.numel() for p in mha.parameters())


def test_param_counts_reject_bad_arguments():
    with pytest.raises(ValueError, match="n_heads must divide d_model"):
        mha_param_count(10, 3)
    with pytest.raises(ValueError, match="d_model"):
        qkv_param_count(0, 4)
    with pytest.raises(TypeError, match="seq_len"):
        qkv_param_count(10, 4.5)


def test_answer_key_causal_mask_choice_is_the_matrix_causal_mask_builds():
    T = 4
    upper = np.triu(np.ones((T, T)), k=1) == 1
    candidates = {
        "A": np.where(upper.T, -np.inf, 0.0),
        "B": np.where(upper, -np.inf, 0.0),
        "C": np.where(~np.eye(T, dtype=bool), -np.inf, 0.0),
    }
    # The right mask lets query i see exactly the keys j <= i: moving a later key must leave earlier
    # outputs unchanged, and moving the first key must change every output.
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(T, 3, generator=gen, dtype=torch.float64) for _ in range(3))
    causal = []
    for name, mask in candidates.items():

        def attend(keys, values):
            return torch.softmax(q @ keys.T / math.sqrt(3) + torch.from_numpy(mask), dim=-1) @ values

        k_late, v_first = k.clone(), v.clone()
        k_late[-1] += 5.0
        v_first[0] += 5.0
        base = attend(k, v)
        blind_to_future = torch.equal(base[:-1], attend(k_late, v)[:-1])
        sees_past = bool((attend(k, v_first) != base).all())
        if blind_to_future and sees_past and torch.isfinite(base).all():
            causal.append(name)
    assert causal == [answers.CAUSAL_MASK_CHOICE]


def test_answer_key_plain_self_attention_is_not_causal():
    gen = torch.Generator().manual_seed(2)
    X = torch.randn(4, 3, generator=gen, dtype=torch.float64)
    W = torch.randn(3, 3, generator=gen, dtype=torch.float64)

    def attend(inp):
        return F.scaled_dot_product_attention(inp @ W, inp @ W, inp @ W)

    X2 = X.clone()
    X2[-1] += 1.0
    leaks = not torch.equal(attend(X)[0], attend(X2)[0])
    assert answers.SELF_ATTENTION_IS_CAUSAL == (not leaks)


def test_answer_key_qkv_param_count_for_d_model_10():
    layers = [torch.nn.Linear(10, 10, bias=False) for _ in range(3)]
    assert answers.QKV_PARAM_COUNT == sum(p.numel() for layer in layers for p in layer.parameters())
