"""Self-checks for the attention notebook. Run them as often as you like.

Each check tests a property your code must have (agreement with torch's own attention, LayerNorm and
transformer layer; rows of weights that sum to 1; causality...). When a property fails, hypothesis
shrinks the input to a small example and the check's cell fails with it and what was expected. Passing
these checks is a good sign, not a guarantee: the grader checks more. This file needs only numpy, torch
and hypothesis.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selfcheck_base import PropertyFailed, SelfCheckFailed, one_line_checks  # noqa: F401
from selfcheck_base import randn as _randn, require as _require, run as _run

_SETTINGS = settings(max_examples=20, derandomize=True, database=None, deadline=None,
                     suppress_health_check=list(HealthCheck), report_multiple_bugs=False)


def _close(got, want, what: str) -> None:
    _require(isinstance(got, torch.Tensor), f"{what}: expected a torch tensor; got {type(got).__name__}")
    _require(got.shape == want.shape, f"{what}: shape {tuple(got.shape)}; expected {tuple(want.shape)}")
    diff = (got.detach().double() - want.double()).abs().max().item() if got.numel() else 0.0
    _require(torch.allclose(got.detach().double(), want.double(), rtol=1e-6, atol=1e-8),
             f"{what}: differs from the expected values (max difference {diff:.3g})")


def _mask(seed, n_q, n_k):
    """A random bool mask (True = may attend) where every query may attend to some key."""
    m = np.random.default_rng(seed).random((n_q, n_k)) < 0.6
    m[np.arange(n_q), np.random.default_rng(seed + 1).integers(0, n_k, n_q)] = True
    return torch.from_numpy(m)


def check_scaled_dot_product_attention(sdpa) -> bool:
    ok = True

    @_SETTINGS
    @given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.booleans(), st.integers(0, 999))
    def matches_torch(n_q, n_k, d, masked, seed):
        Q, K, V = _randn(seed, 2, n_q, d), _randn(seed + 1, 2, n_k, d), _randn(seed + 2, 2, n_k, 2)
        mask = _mask(seed, n_q, n_k) if masked else None
        out = sdpa(Q, K, V, mask)
        _require(isinstance(out, tuple) and len(out) == 2, "return the pair (Y, A)")
        Y, A = out
        what = f"Q {tuple(Q.shape)}, K {tuple(K.shape)}, mask {None if mask is None else mask.int().tolist()}"
        _close(Y, F.scaled_dot_product_attention(Q, K, V, attn_mask=mask), f"Y for {what} (vs torch)")
        _require(torch.allclose(A.detach().sum(-1), torch.ones(2, n_q, dtype=A.dtype)),
                 f"the rows of A do not sum to 1 for {what}: softmax over the keys (last axis)")
        if masked:
            _require(bool(torch.all(A.detach()[:, ~mask] == 0)), f"A is not 0 where the mask is False for {what}")

    ok &= _run("scaled_dot_product_attention: agrees with torch; rows of A sum to 1; masked weights are 0", matches_torch)

    def empty_row():
        Q, K, V = _randn(1, 3, 2), _randn(2, 4, 2), _randn(3, 4, 2)
        mask = torch.tensor([[True, False, True, True], [False, False, False, False], [True, True, False, False]])
        Y, A = sdpa(Q, K, V, mask)
        _require(bool(torch.isfinite(Y).all() and torch.isfinite(A).all()), "Y or A holds NaN when a query may attend to nothing")
        _require(bool(torch.all(Y[1] == 0) and torch.all(A[1] == 0)), "the query that may attend to nothing should get zero rows")

    ok &= _run("scaled_dot_product_attention: a query with no allowed key gets zeros, not NaN", empty_row)
    ok &= _run("scaled_dot_product_attention: gradients agree with torch's",
               lambda: _same_gradients(lambda q, k, v: sdpa(q, k, v)[0], F.scaled_dot_product_attention,
                                       [_randn(4, 2, 3, 2), _randn(5, 2, 4, 2), _randn(6, 2, 4, 3)], "Q, K, V"))
    return ok


def _same_gradients(mine, theirs, args, names: str) -> None:
    """Gradients of sum(mine(*args) * c) equal those of torch's function."""
    grads = []
    for f in (mine, theirs):
        leaves = [a.clone().requires_grad_() for a in args]
        out = f(*leaves)
        _require(isinstance(out, torch.Tensor) and out.requires_grad,
                 "the result does not require grad: use torch operations only (no .detach(), .numpy(), torch.tensor(...))")
        (out * _randn(9, *out.shape)).sum().backward()
        grads.append([torch.zeros_like(a) if a.grad is None else a.grad for a in leaves])
    for name, g, want in zip(names.split(", "), *grads):
        _require(torch.allclose(g, want, rtol=1e-6, atol=1e-8), f"the gradient with respect to {name} differs from torch's")


def check_self_attention(self_attention) -> bool:
    @_SETTINGS
    @given(st.integers(2, 5), st.sampled_from([3, 4]), st.booleans(), st.integers(0, 999))
    def equivariant(N, D, batched, seed):
        X = _randn(seed, *((2,) if batched else ()), N, D)
        Wq, Wk, Wv = _randn(seed + 1, D, 2), _randn(seed + 2, D, 2), _randn(seed + 3, D, 4)
        Y = self_attention(X, Wq, Wk, Wv)
        _close(Y, F.scaled_dot_product_attention(X @ Wq, X @ Wk, X @ Wv), f"self_attention for X of shape {tuple(X.shape)}")
        perm = torch.from_numpy(np.random.default_rng(seed).permutation(N))
        _close(self_attention(X[..., perm, :], Wq, Wk, Wv), Y[..., perm, :],
               f"self_attention(X[perm]) vs self_attention(X)[perm] for perm {perm.tolist()}")

    return _run("self_attention: agrees with torch and is permutation equivariant", equivariant)


def _rows_follow_the_formula(P, T: int, d: int, rows, tolerance: float) -> None:
    for t in rows:
        for c in range(d):
            angle = t / 10000 ** ((c - c % 2) / d)
            want = np.sin(angle) if c % 2 == 0 else np.cos(angle)
            _require(abs(P[t, c].item() - want) < tolerance,
                     f"sinusoidal_positions({T}, {d})[{t}, {c}] = {P[t, c].item():.6g}; expected "
                     f"{'sin' if c % 2 == 0 else 'cos'}({t} / 10000^({c - c % 2}/{d})) = {want:.6g}")


def check_sinusoidal_positions(sinusoidal_positions) -> bool:
    def formula():
        for T, d in ((1, 2), (5, 10), (9, 6)):
            P = sinusoidal_positions(T, d)
            _require(isinstance(P, torch.Tensor) and P.shape == (T, d) and P.dtype == torch.get_default_dtype(),
                     f"sinusoidal_positions({T}, {d}) should be a ({T}, {d}) tensor of dtype {torch.get_default_dtype()}")
            _rows_follow_the_formula(P, T, d, range(T), 1e-5)

    def far_positions():
        # Far along the sequence the angle t / 10000^(c/d) is large: any other base or exponent shows there
        # (float32 keeps about 1e-4 of an angle near 1000).
        T, d = 1203, 6
        _rows_follow_the_formula(sinusoidal_positions(T, d), T, d, (T - 1, T // 2), 2e-4)

    return (_run("sinusoidal_positions: sin in even columns, cos in odd ones, as the formula says", formula)
            & _run("sinusoidal_positions: far along a long sequence too", far_positions))


def _torch_mha(D, H, Wq, Wk, Wv, Wo):
    mha = torch.nn.MultiheadAttention(D, H, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([Wq.T, Wk.T, Wv.T]))
        mha.out_proj.weight.copy_(Wo.T)
    return mha


def check_multi_head_attention(multi_head_attention) -> bool:
    ok = True

    @_SETTINGS
    @given(st.integers(1, 3), st.integers(1, 2), st.integers(1, 4), st.sampled_from(["none", "causal", "random"]),
           st.integers(0, 999))
    def matches_torch(H, Dh, N, kind, seed):
        D = H * Dh
        X = _randn(seed, 2, N, D)
        Wq, Wk, Wv, Wo = (_randn(seed + k, D, D) for k in (1, 2, 3, 4))
        mask = {"none": None, "causal": torch.ones(N, N, dtype=torch.bool).tril(), "random": _mask(seed, N, N)}[kind]
        with torch.no_grad():  # torch's attn_mask: True = may NOT attend, the opposite of ours
            want, _ = _torch_mha(D, H, Wq, Wk, Wv, Wo)(X, X, X, attn_mask=None if mask is None else ~mask)
        _close(multi_head_attention(X, Wq, Wk, Wv, Wo, H, mask), want,
               f"multi_head_attention with H={H}, Dh={Dh}, N={N}, mask={kind} (vs torch.nn.MultiheadAttention)")

    ok &= _run("multi_head_attention: agrees with torch.nn.MultiheadAttention(bias=False)", matches_torch)

    def rejects():
        W = _randn(0, 6, 6)
        try:
            multi_head_attention(_randn(1, 3, 6), W, W, W, W, 4)
        except ValueError:
            return
        raise PropertyFailed("multi_head_attention with D = 6 and n_heads = 4 should raise ValueError")

    ok &= _run("multi_head_attention: raises ValueError when n_heads does not divide D", rejects)
    return ok


_LEADS = st.sampled_from([(), (3,), (2, 3)])


def check_layer_norm(layer_norm) -> bool:
    @_SETTINGS
    @given(_LEADS, st.integers(2, 5), st.sampled_from([1e-5, 0.1]), st.integers(0, 999))
    def matches_torch(lead, D, eps, seed):
        x, gamma, beta = _randn(seed, *lead, D) * 2 + 1, _randn(seed + 1, D), _randn(seed + 2, D)
        _close(layer_norm(x, gamma, beta, eps), F.layer_norm(x, (D,), gamma, beta, eps),
               f"layer_norm for x of shape {tuple(x.shape)}, eps={eps} (vs torch.nn.functional.layer_norm)")

    ok = _run("layer_norm: agrees with torch.nn.functional.layer_norm", matches_torch)
    D = 4
    ok &= _run("layer_norm: gradients agree with torch's",
               lambda: _same_gradients(lambda x, g, b: layer_norm(x, g, b, 1e-5),
                                       lambda x, g, b: F.layer_norm(x, (D,), g, b, 1e-5),
                                       [_randn(1, 2, 3, D), _randn(2, D), _randn(3, D)], "x, gamma, beta"))
    return ok


def check_rms_norm(rms_norm) -> bool:
    @_SETTINGS
    @given(_LEADS, st.integers(1, 5), st.sampled_from([1e-5, 0.1]), st.integers(0, 999))
    def matches_torch(lead, D, eps, seed):
        x, gamma = _randn(seed, *lead, D) * 2 + 1, _randn(seed + 1, D)
        _close(rms_norm(x, gamma, eps), F.rms_norm(x, (D,), gamma, eps),
               f"rms_norm for x of shape {tuple(x.shape)}, eps={eps} (vs torch.nn.functional.rms_norm)")

    return _run("rms_norm: agrees with torch.nn.functional.rms_norm", matches_torch)


def check_swiglu(swiglu) -> bool:
    @_SETTINGS
    @given(_LEADS, st.integers(1, 4), st.integers(1, 4), st.integers(0, 999))
    def formula(lead, D, Fw, seed):
        x, W1, W2, W3 = _randn(seed, *lead, D), _randn(seed + 1, D, Fw), _randn(seed + 2, D, Fw), _randn(seed + 3, Fw, D)
        _close(swiglu(x, W1, W2, W3), (F.silu(x @ W1) * (x @ W2)) @ W3, f"swiglu for x of shape {tuple(x.shape)}")

    return _run("swiglu: (silu(x W1) * (x W2)) W3", formula)


def _params(seed, D):
    r = iter(range(seed, seed + 20))
    return {"ln1_gamma": 1 + _randn(next(r), D) / 4, "ln1_beta": _randn(next(r), D) / 4, "Wq": _randn(next(r), D, D),
            "Wk": _randn(next(r), D, D), "Wv": _randn(next(r), D, D), "Wo": _randn(next(r), D, D) / 2,
            "ln2_gamma": 1 + _randn(next(r), D) / 4, "ln2_beta": _randn(next(r), D) / 4,
            "W1": _randn(next(r), D, 4 * D) / 2, "b1": _randn(next(r), 4 * D) / 4, "W2": _randn(next(r), 4 * D, D) / 2,
            "b2": _randn(next(r), D) / 4}


def _torch_block(D, H, p):
    layer = torch.nn.TransformerEncoderLayer(D, H, dim_feedforward=4 * D, dropout=0.0, batch_first=True, norm_first=True,
                                             dtype=torch.float64)
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.cat([p["Wq"].T, p["Wk"].T, p["Wv"].T]))
        layer.self_attn.in_proj_bias.zero_()
        layer.self_attn.out_proj.weight.copy_(p["Wo"].T)
        layer.self_attn.out_proj.bias.zero_()
        layer.linear1.weight.copy_(p["W1"].T)
        layer.linear1.bias.copy_(p["b1"])
        layer.linear2.weight.copy_(p["W2"].T)
        layer.linear2.bias.copy_(p["b2"])
        for norm, k in ((layer.norm1, 1), (layer.norm2, 2)):
            norm.weight.copy_(p[f"ln{k}_gamma"])
            norm.bias.copy_(p[f"ln{k}_beta"])
    return layer.eval()


def check_transformer_block(transformer_block) -> bool:
    ok = True
    settings_few = settings(_SETTINGS, max_examples=10)

    @settings_few
    @given(st.integers(1, 2), st.integers(1, 2), st.integers(1, 4), st.booleans(), st.integers(0, 999))
    def matches_torch(H, Dh, N, causal, seed):
        D = H * Dh
        x, p = _randn(seed, 2, N, D), _params(seed + 1, D)
        with torch.no_grad():
            mask = torch.nn.Transformer.generate_square_subsequent_mask(N, dtype=torch.float64) if causal else None
            want = _torch_block(D, H, p)(x, src_mask=mask, is_causal=causal)
        _close(transformer_block(x, p, H, causal), want,
               f"transformer_block with H={H}, D={D}, N={N}, causal={causal} (vs torch.nn.TransformerEncoderLayer)")

    ok &= _run("transformer_block: agrees with torch.nn.TransformerEncoderLayer(norm_first=True)", matches_torch)

    @settings_few
    @given(st.integers(2, 5), st.integers(0, 999))
    def causal(N, seed):
        x, p = _randn(seed, N, 4), _params(seed + 1, 4)
        y = transformer_block(x, p, 2, True)
        x2 = x.clone()
        x2[-1] += 1.0
        _require(torch.allclose(transformer_block(x2, p, 2, True)[:-1], y[:-1], atol=1e-12),
                 f"N={N}: with causal=True, changing the last input changed earlier outputs")

    ok &= _run("transformer_block: with causal=True, outputs do not depend on later inputs", causal)
    return ok


def check_attention_weights_bytes(attention_weights_bytes) -> bool:
    def sizes():
        for N, H, dtype in ((7, 3, torch.float32), (19, 5, torch.float16), (11, 6, torch.float64)):
            A = torch.empty(H, N, N, dtype=dtype)
            got = attention_weights_bytes(N, H, A.element_size())
            _require(got == A.numel() * A.element_size(),
                     f"attention_weights_bytes({N}, {H}, {A.element_size()}) = {got}; torch.empty({H}, {N}, {N}, "
                     f"dtype={dtype}) takes {A.numel() * A.element_size()} bytes")

    return _run("attention_weights_bytes: the size of the H x N x N weights tensor", sizes)


def check_block_param_count(block_param_count) -> bool:
    def counts():
        for D in (2, 4, 6):
            for bias in (True, False):
                layer = torch.nn.TransformerEncoderLayer(D, 2, dim_feedforward=4 * D, bias=bias)
                want = sum(p.numel() for p in layer.parameters())
                got = block_param_count(D, bias=bias)
                _require(got == want, f"block_param_count({D}, bias={bias}) = {got}; torch.nn.TransformerEncoderLayer has {want}")

    return _run("block_param_count: agrees with torch.nn.TransformerEncoderLayer", counts)


one_line_checks(globals())
