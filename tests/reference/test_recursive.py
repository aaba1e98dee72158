"""The recursive_attention reference against independent computations: float64 softmax attention written
out, torch's scaled_dot_product_attention, and an HBM count made by walking the algorithms' loops."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from reference import recursive as ref


def _randn(seed, *shape, dtype=torch.float64):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(dtype)


def _by_hand(q, K, V):
    """Softmax attention for one query, element by element in Python floats."""
    d = len(q)
    scores = [sum(q[i] * k[i] for i in range(d)) / math.sqrt(d) for k in K]
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    total = sum(weights)
    return top + math.log(total), [sum(w * v[j] for w, v in zip(weights, V)) / total for j in range(len(V[0]))]


@given(st.integers(1, 6), st.integers(1, 4), st.integers(1, 3), st.integers(0, 999))
def test_attention_partial_matches_attention_written_out(Nk, d, dv, seed):
    q, K, V = _randn(seed, d), _randn(seed + 1, Nk, d), _randn(seed + 2, Nk, dv)
    s, v = ref.attention_partial(q, K, V)
    want_s, want_v = _by_hand(q.tolist(), K.tolist(), V.tolist())
    assert math.isclose(float(s), want_s, rel_tol=1e-12) and np.allclose(v.numpy(), want_v, rtol=1e-12, atol=1e-14)


def test_attention_partial_of_no_keys_is_the_empty_state():
    s, v = ref.attention_partial(_randn(0, 3, 2), _randn(1, 0, 2), _randn(2, 0, 4))
    assert s.shape == (3,) and bool((s == -math.inf).all()) and v.shape == (3, 4) and not v.any()


@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=5).filter(sum), st.integers(0, 3), st.integers(0, 999), st.data()
)
def test_any_partition_merged_in_any_order_is_full_attention(sizes, Nq, seed, data):
    d, dv = 3, 2
    q = _randn(seed, *((Nq, d) if Nq else (d,)))
    K, V = _randn(seed + 1, sum(sizes), d), _randn(seed + 2, sum(sizes), dv)
    bounds = np.cumsum([0, *sizes])
    states = [ref.attention_partial(q, K[a:b], V[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    while len(states) > 1:
        i = data.draw(st.integers(0, len(states) - 2))
        states[i : i + 2] = [ref.merge(states[i], states[i + 1])]
    want = ref.full_attention(q if Nq else q[None], K, V)
    got = states[0][1] if Nq else states[0][1][None]
    assert torch.allclose(got, want, rtol=1e-10, atol=1e-12)


def test_merge_is_stable_for_huge_and_distant_scores():
    t = lambda x: torch.tensor(x, dtype=torch.float64)  # noqa: E731
    s, v = ref.merge((t(1e4), t([1.0])), (t(1e4 + math.log(3)), t([5.0])))
    assert math.isclose(float(s), 1e4 + math.log(4), rel_tol=1e-15) and math.isclose(float(v), 4.0, rel_tol=1e-12)
    s, v = ref.merge((t(0.0), t([1.0])), (t(-800.0), t([9.0])))
    assert float(s) == 0.0 and float(v) == 1.0
    s, v = ref.merge((t(-math.inf), t([0.0])), (t(-math.inf), t([0.0])))
    assert float(s) == -math.inf and float(v) == 0.0


@given(
    st.integers(0, 4),
    st.integers(1, 40),
    st.integers(1, 9),
    st.sampled_from([torch.float32, torch.float64]),
    st.integers(0, 999),
)
def test_online_softmax_matches_torch_sdpa(Nq, Nk, block, dtype, seed):
    q = _randn(seed, *((Nq, 4) if Nq else (4,)), dtype=dtype)
    K, V = _randn(seed + 1, Nk, 4, dtype=dtype), _randn(seed + 2, Nk, 3, dtype=dtype)
    want = torch.nn.functional.scaled_dot_product_attention(q if Nq else q[None], K, V)
    got = ref.online_softmax_attention(q, K, V, block)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    assert got.dtype == dtype and torch.allclose(got if Nq else got[None], want, rtol=tol, atol=tol)


@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 9), st.integers(1, 9), st.booleans(), st.integers(0, 999))
def test_tiled_attention_matches_torch_sdpa_and_its_lse(Nq, Nk, block_q, block_k, causal, seed):
    Nk = Nq if causal else Nk
    Q, K, V = _randn(seed, Nq, 8), _randn(seed + 1, Nk, 8), _randn(seed + 2, Nk, 5)
    O, lse = ref.tiled_attention(Q, K, V, block_q, block_k, causal)
    assert torch.allclose(
        O, torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=causal), rtol=1e-10, atol=1e-12
    )
    scores = Q @ K.T / math.sqrt(8)
    if causal:
        scores = scores.masked_fill(torch.ones(Nq, Nk, dtype=torch.bool).triu(1), -math.inf)
    assert torch.allclose(lse, torch.logsumexp(scores, -1), rtol=1e-10, atol=1e-12)


def _count_standard(N, d):
    """Walk standard attention's steps, adding up the elements each reads from and writes to HBM."""
    io = 0
    io += N * d + N * d  # S = Q K^T reads Q and K ...
    io += N * N  # ... and writes S
    io += N * N + N * N  # P = softmax(S) reads S, writes P
    io += N * N + N * d + N * d  # O = P V reads P and V, writes O
    return io


def _count_flash(N, d, M):
    """Walk FlashAttention's loops (key/value blocks outside, query blocks inside), adding up HBM traffic."""
    rows = M // (4 * d)
    io = 0
    for k0 in range(0, N, rows):
        kv_rows = min(rows, N - k0)
        io += 2 * kv_rows * d  # load K_j, V_j
        for q0 in range(0, N, rows):
            q_rows = min(rows, N - q0)
            io += q_rows * d + q_rows * d + q_rows * d  # load Q_i and O_i, write O_i
    return io


@given(st.integers(1, 300), st.integers(1, 32), st.integers(4, 5000))
def test_attention_io_matches_counting_the_loops(N, d, M):
    if M < 4 * d:
        with pytest.raises(ValueError):
            ref.attention_io(N, d, M)
        return
    assert ref.attention_io(N, d, M) == (_count_standard(N, d), _count_flash(N, d, M))


def test_the_tiling_answer_follows_from_the_counts():
    """B is right: with M at most about 3 d^2, tiling moves at least as much as standard attention; with a
    larger M it moves less, whatever N and d (and causal masking is not in the counts at all)."""
    for N, d in ((4096, 64), (1024, 128), (8192, 32)):
        standard, flash = ref.attention_io(N, d, 2 * d * d)
        assert flash >= standard
        standard, flash = ref.attention_io(N, d, 16 * d * d)
        assert flash < standard
    assert ref.TILING_DOES_NOT_HELP == "B"
