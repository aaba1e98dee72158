"""reference.transformer against torch: SDPA, nn.MultiheadAttention, F.layer_norm, nn.TransformerEncoderLayer."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import transformer as T

FAST = settings(max_examples=25, deadline=None)


def randn(gen, *shape):
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


def allowed_mask(gen, *shape):
    """A random bool mask (True = may attend) in which every query may attend to at least one key."""
    mask = torch.rand(*shape, generator=gen) < 0.6
    mask[..., 0] |= ~mask.any(dim=-1)  # no fully masked row
    return mask


@FAST
@given(
    lead=st.sampled_from([(), (2,), (2, 3)]),
    Nq=st.integers(1, 5),
    Nk=st.integers(1, 5),
    dk=st.integers(1, 4),
    dv=st.integers(1, 4),
    masked=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_sdpa_matches_torch_sdpa_and_the_softmax_formula(lead, Nq, Nk, dk, dv, masked, seed):
    gen = torch.Generator().manual_seed(seed)
    Q, K, V = randn(gen, *lead, Nq, dk), randn(gen, *lead, Nk, dk), randn(gen, *lead, Nk, dv)
    mask = allowed_mask(gen, Nq, Nk) if masked else None  # broadcast over the leading axes
    Y, A = T.scaled_dot_product_attention(Q, K, V, mask)
    torch.testing.assert_close(Y, F.scaled_dot_product_attention(Q, K, V, attn_mask=mask))
    scores = Q @ K.transpose(-2, -1) / math.sqrt(dk)
    if masked:
        scores = scores.masked_fill(~mask, float("-inf"))
    torch.testing.assert_close(A, torch.softmax(scores, dim=-1))
    if masked:
        assert torch.all(A[..., ~mask] == 0)


def test_sdpa_fully_masked_row_gives_zero_weights_and_output_and_finite_gradients():
    gen = torch.Generator().manual_seed(1)
    Q, K, V = (randn(gen, 3, 2).requires_grad_() for _ in range(3))
    mask = torch.tensor([[True, False, True], [False, False, False], [True, True, True]])
    Y, A = T.scaled_dot_product_attention(Q, K, V, mask)
    assert torch.all(Y[1] == 0) and torch.all(A[1] == 0)
    torch.testing.assert_close(Y, F.scaled_dot_product_attention(Q, K, V, attn_mask=mask))  # torch 2.13 agrees
    (Y.sum() + A.sum()).backward()
    assert all(torch.isfinite(t.grad).all() for t in (Q, K, V))


def test_sdpa_gradients_match_finite_differences():
    gen = torch.Generator().manual_seed(2)
    args = (
        randn(gen, 2, 3, 2).requires_grad_(),
        randn(gen, 2, 4, 2).requires_grad_(),
        randn(gen, 2, 4, 3).requires_grad_(),
    )
    mask = allowed_mask(gen, 3, 4)
    assert torch.autograd.gradcheck(lambda q, k, v: T.scaled_dot_product_attention(q, k, v, mask), args)


@FAST
@given(
    batched=st.booleans(), N=st.integers(1, 5), D=st.integers(1, 4), dk=st.integers(1, 4), seed=st.integers(0, 2**16)
)
def test_self_attention_is_unmasked_sdpa_of_the_projections(batched, N, D, dk, seed):
    gen = torch.Generator().manual_seed(seed)
    X = randn(gen, *((2,) if batched else ()), N, D)
    Wq, Wk, Wv = randn(gen, D, dk), randn(gen, D, dk), randn(gen, D, 3)
    torch.testing.assert_close(T.self_attention(X, Wq, Wk, Wv), F.scaled_dot_product_attention(X @ Wq, X @ Wk, X @ Wv))


@FAST
@given(T_=st.integers(1, 20), half=st.integers(1, 8))
def test_sinusoidal_positions_follow_the_formula(T_, half):
    d = 2 * half
    P = T.sinusoidal_positions(T_, d)
    assert P.shape == (T_, d) and P.dtype == torch.get_default_dtype()
    for t in range(T_):
        for i in range(half):
            angle = t / 10000 ** (2 * i / d)
            assert math.isclose(P[t, 2 * i].item(), math.sin(angle), abs_tol=1e-6)
            assert math.isclose(P[t, 2 * i + 1].item(), math.cos(angle), abs_tol=1e-6)


def test_sinusoidal_positions_reject_odd_widths():
    with pytest.raises(ValueError, match="even"):
        T.sinusoidal_positions(4, 3)


def test_positions_break_self_attention_permutation_equivariance():
    gen = torch.Generator().manual_seed(3)
    X, Wq, Wk, Wv = randn(gen, 5, 4), randn(gen, 4, 4), randn(gen, 4, 4), randn(gen, 4, 4)
    perm = torch.tensor([4, 2, 0, 1, 3])
    assert T.is_permutation_equivariant(lambda Z: T.self_attention(Z, Wq, Wk, Wv), X, perm)
    P = T.sinusoidal_positions(5, 4).double()
    assert not T.is_permutation_equivariant(lambda Z: T.self_attention(Z + P, Wq, Wk, Wv), X, perm)
    assert T.SELF_ATTENTION_WITH_POSITIONS_IS_EQUIVARIANT is False


def torch_mha(D, H, Wq, Wk, Wv, Wo):
    """nn.MultiheadAttention(bias=False) holding our weights: torch stores (out, in), we use X @ W."""
    mha = torch.nn.MultiheadAttention(D, H, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([Wq.T, Wk.T, Wv.T]))
        mha.out_proj.weight.copy_(Wo.T)
    return mha.eval()


@FAST
@given(
    H=st.integers(1, 3),
    Dh=st.integers(1, 3),
    N=st.integers(1, 5),
    batched=st.booleans(),
    mask_kind=st.sampled_from(["none", "causal", "random"]),
    seed=st.integers(0, 2**16),
)
def test_multi_head_attention_matches_torch_multihead_attention(H, Dh, N, batched, mask_kind, seed):
    D = H * Dh
    gen = torch.Generator().manual_seed(seed)
    X = randn(gen, 2, N, D)
    Wq, Wk, Wv, Wo = (randn(gen, D, D) for _ in range(4))
    mask = {"none": None, "causal": torch.ones(N, N, dtype=torch.bool).tril(), "random": allowed_mask(gen, N, N)}[
        mask_kind
    ]
    with torch.no_grad():  # torch's mask: True = may NOT attend, the opposite of ours
        want, _ = torch_mha(D, H, Wq, Wk, Wv, Wo)(
            X, X, X, attn_mask=None if mask is None else ~mask, need_weights=False
        )
    got = T.multi_head_attention(X if batched else X[0], Wq, Wk, Wv, Wo, H, mask)
    torch.testing.assert_close(got, want if batched else want[0])


def test_multi_head_attention_rejects_heads_that_do_not_divide_the_width():
    X, W = torch.zeros(3, 6), torch.zeros(6, 6)
    with pytest.raises(ValueError, match="divide"):
        T.multi_head_attention(X, W, W, W, W, 4)


@FAST
@given(
    lead=st.sampled_from([(), (3,), (2, 3), (2, 1, 3)]),
    D=st.integers(1, 6),
    eps=st.sampled_from([1e-5, 1e-2, 0.5]),
    seed=st.integers(0, 2**16),
)
def test_layer_norm_matches_torch_and_rms_norm_matches_its_formula(lead, D, eps, seed):
    gen = torch.Generator().manual_seed(seed)
    x, gamma, beta = randn(gen, *lead, D), randn(gen, D), randn(gen, D)
    torch.testing.assert_close(T.layer_norm(x, gamma, beta, eps), F.layer_norm(x, (D,), gamma, beta, eps))
    torch.testing.assert_close(T.rms_norm(x, gamma, eps), F.rms_norm(x, (D,), gamma, eps))


@FAST
@given(lead=st.sampled_from([(), (3,), (2, 3)]), D=st.integers(1, 4), F_=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_swiglu_matches_silu_gating(lead, D, F_, seed):
    gen = torch.Generator().manual_seed(seed)
    x, W1, W2, W3 = randn(gen, *lead, D), randn(gen, D, F_), randn(gen, D, F_), randn(gen, F_, D)
    a = x @ W1
    torch.testing.assert_close(T.swiglu(x, W1, W2, W3), (a / (1 + torch.exp(-a)) * (x @ W2)) @ W3)


def test_norms_and_swiglu_gradients_match_finite_differences():
    gen = torch.Generator().manual_seed(4)
    x, g, b = (randn(gen, *s).requires_grad_() for s in ((2, 3, 4), (4,), (4,)))
    assert torch.autograd.gradcheck(lambda x, g, b: T.layer_norm(x, g, b), (x, g, b))
    assert torch.autograd.gradcheck(lambda x, g: T.rms_norm(x, g), (x, g))
    W1, W2, W3 = (randn(gen, *s).requires_grad_() for s in ((4, 5), (4, 5), (5, 4)))
    assert torch.autograd.gradcheck(T.swiglu, (x, W1, W2, W3))


def block_params(gen, D):
    return {
        "ln1_gamma": 1 + randn(gen, D) / 4,
        "ln1_beta": randn(gen, D) / 4,
        "Wq": randn(gen, D, D),
        "Wk": randn(gen, D, D),
        "Wv": randn(gen, D, D),
        "Wo": randn(gen, D, D) / 2,
        "ln2_gamma": 1 + randn(gen, D) / 4,
        "ln2_beta": randn(gen, D) / 4,
        "W1": randn(gen, D, 4 * D) / 2,
        "b1": randn(gen, 4 * D) / 4,
        "W2": randn(gen, 4 * D, D) / 2,
        "b2": randn(gen, D) / 4,
    }


def torch_block(D, H, p):
    """nn.TransformerEncoderLayer(norm_first=True, dropout=0, relu) with our weights and zero attention biases."""
    layer = torch.nn.TransformerEncoderLayer(
        D,
        H,
        dim_feedforward=4 * D,
        dropout=0.0,
        activation="relu",
        batch_first=True,
        norm_first=True,
        dtype=torch.float64,
    )
    with torch.no_grad():
        attn = layer.self_attn
        attn.in_proj_weight.copy_(torch.cat([p["Wq"].T, p["Wk"].T, p["Wv"].T]))
        attn.in_proj_bias.zero_()
        attn.out_proj.weight.copy_(p["Wo"].T)
        attn.out_proj.bias.zero_()
        layer.linear1.weight.copy_(p["W1"].T)
        layer.linear1.bias.copy_(p["b1"])
        layer.linear2.weight.copy_(p["W2"].T)
        layer.linear2.bias.copy_(p["b2"])
        for norm, name in ((layer.norm1, "ln1"), (layer.norm2, "ln2")):
            norm.weight.copy_(p[f"{name}_gamma"])
            norm.bias.copy_(p[f"{name}_beta"])
    return layer.eval()


@FAST
@given(
    H=st.integers(1, 3),
    Dh=st.integers(1, 2),
    N=st.integers(1, 5),
    causal=st.booleans(),
    batched=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_transformer_block_matches_torch_encoder_layer(H, Dh, N, causal, batched, seed):
    D = H * Dh
    gen = torch.Generator().manual_seed(seed)
    x, p = randn(gen, 2, N, D), block_params(gen, D)
    layer = torch_block(D, H, p)
    with torch.no_grad():
        mask = torch.nn.Transformer.generate_square_subsequent_mask(N, dtype=torch.float64) if causal else None
        want = layer(x, src_mask=mask, is_causal=causal)
    got = T.transformer_block(x if batched else x[0], p, H, causal)
    torch.testing.assert_close(got, want if batched else want[0])
    assert set(p) == set(T.BLOCK_PARAM_NAMES)


@given(H=st.integers(1, 4), Dh=st.integers(1, 6), bias=st.booleans())
@settings(max_examples=15, deadline=None)
def test_block_param_count_counts_the_torch_encoder_layer(H, Dh, bias):
    D = H * Dh
    layer = torch.nn.TransformerEncoderLayer(D, H, dim_feedforward=4 * D, bias=bias)
    assert T.block_param_count(D, bias) == sum(p.numel() for p in layer.parameters())
    assert T.block_param_count(D) == 12 * D * D + 13 * D


@given(N=st.integers(1, 9), H=st.integers(1, 4), dtype=st.sampled_from([torch.float16, torch.float32, torch.float64]))
@settings(max_examples=15, deadline=None)
def test_attention_weights_bytes_is_the_size_of_the_weights_tensor(N, H, dtype):
    A = torch.empty(H, N, N, dtype=dtype)
    assert T.attention_weights_bytes(N, H, A.element_size()) == A.numel() * A.element_size()


def test_swap_poll_output_follows_the_contents_not_the_positions():
    x = torch.tensor(T.POLL_INPUTS, dtype=torch.float64)
    a = torch.tensor(T.POLL_WEIGHTS, dtype=torch.float64)
    torch.testing.assert_close(T.SWAP_POLL_OUTPUT, a @ x)  # weights travel with their inputs: unchanged
    position_bound = a @ x[[0, 2, 1, 3]]
    assert not torch.allclose(T.SWAP_POLL_OUTPUT, position_bound)
