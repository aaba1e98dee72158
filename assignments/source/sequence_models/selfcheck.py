"""Self-checks for the sequence_models notebook. Run them as often as you like.

Each check tests a property your code must have (shapes, what a window holds, causality, agreement with
a torch.nn module...). When a property fails, hypothesis shrinks the input to a small example and the
check's cell fails with it and what was expected. Passing these checks is a good sign, not a guarantee:
the grader checks more. This file needs only numpy, torch and hypothesis.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selfcheck_base import PropertyFailed, SelfCheckFailed, one_line_checks  # noqa: F401
from selfcheck_base import randn as _randn, require as _require, run as _run
from selfcheck_base import require_value_error as _require_value_error

_SETTINGS = settings(max_examples=30, derandomize=True, database=None, deadline=None,
                     suppress_health_check=list(HealthCheck), report_multiple_bugs=False)


small_ints = st.lists(st.integers(-9, 9), min_size=2, max_size=10)


def check_seq2col(seq2col) -> bool:
    @_SETTINGS
    @given(small_ints, st.data())
    def windows(values, data):
        s = data.draw(st.integers(1, len(values) - 1))
        X, y = seq2col(values, s)
        n = len(values)
        _require(isinstance(X, np.ndarray) and isinstance(y, np.ndarray), f"seq2col({values}, {s}) should return two ndarrays")
        _require(X.shape == (n - s, s) and y.shape == (n - s,),
                 f"seq2col({values}, {s}): X has shape {X.shape} and y {y.shape}; expected {(n - s, s)} and {(n - s,)}")
        for i in range(n - s):
            _require(list(X[i]) == values[i:i + s], f"seq2col({values}, {s}): X[{i}] = {list(X[i])}, expected {values[i:i + s]}")
            _require(y[i] == values[i + s], f"seq2col({values}, {s}): y[{i}] = {y[i]}, expected {values[i + s]}")

    def bad_sizes():
        values = [3, 1, 4, 1, 5]
        for s in (0, -1, len(values), len(values) + 2):
            _require_value_error(seq2col, values, s, why="a window needs 1 <= filter_size < len(seq)")

    return (_run("seq2col: X[i] = seq[i:i+s] and y[i] = seq[i+s]", windows)
            & _run("seq2col: ValueError for a filter size outside 1 .. len(seq) - 1", bad_sizes))


def check_ar_fit(ar_fit) -> bool:
    @_SETTINGS
    @given(small_ints, st.data())
    def normal_equations(values, data):
        s = data.draw(st.integers(1, len(values) - 1))
        w = np.asarray(ar_fit(values, s), dtype=float)
        _require(w.shape == (s + 1,), f"ar_fit({values}, {s}) has shape {w.shape}; expected ({s + 1},)")
        A = np.column_stack([np.lib.stride_tricks.sliding_window_view(values, s)[:-1], np.ones(len(values) - s)])
        grad = A.T @ (A @ w - np.asarray(values[s:], dtype=float))
        _require(np.allclose(grad, 0, atol=1e-6 * (1 + np.abs(A).max() ** 2)),
                 f"ar_fit({values}, {s}) = {np.round(w, 4)} is not a least-squares solution: A^T (A w - y) = {np.round(grad, 4)}")

    return _run("ar_fit: the weights solve the least-squares problem", normal_equations)


def check_recurrent_unit(recurrent_unit) -> bool:
    @_SETTINGS
    @given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(0, 999))
    def matches_rnn_cell(B, d_in, d_h, seed):
        x, h, Wrec, Win = _randn(seed, B, d_in), _randn(seed + 1, B, d_h), _randn(seed + 2, d_h, d_h), _randn(seed + 3, d_h, d_in)
        cell = torch.nn.RNNCell(d_in, d_h, bias=False, nonlinearity="relu", dtype=torch.float64)
        with torch.no_grad():
            cell.weight_ih.copy_(Win)
            cell.weight_hh.copy_(Wrec)
            want = cell(x, h)
        got = recurrent_unit(x, h, Wrec, Win)
        _require(isinstance(got, torch.Tensor) and got.shape == (B, d_h), f"shape {getattr(got, 'shape', None)}; expected {(B, d_h)}")
        _require(torch.allclose(got.detach(), want), f"for B={B}, d_in={d_in}, d_h={d_h} the result differs from torch.nn.RNNCell "
                                                    f"(max difference {(got.detach() - want).abs().max():.3g})")

    return _run("recurrent_unit: agrees with torch.nn.RNNCell(relu, no bias)", matches_rnn_cell)


def check_ar_as_recurrent(ar_as_recurrent) -> bool:
    @_SETTINGS
    @given(st.lists(st.sampled_from([1.5, -1.25, 0.75, 3.0]), min_size=1, max_size=4),
           st.lists(st.sampled_from([1.0, 0.0, -2.0]), min_size=1, max_size=6))
    def reproduces(w, x):
        Wrec, win, wout = (torch.as_tensor(t, dtype=torch.float64) for t in ar_as_recurrent(np.array(w)))
        h = torch.zeros(Wrec.shape[0], dtype=torch.float64)
        for t, value in enumerate(x):
            h = Wrec @ h + win.flatten() * value
            got = float(wout.flatten() @ h)
            # w is oldest first, as ar_fit returns it: w[-1] weighs the newest input x[t]
            want = sum(w[-1 - tau] * x[t - tau] for tau in range(len(w)) if t - tau >= 0)
            _require(math.isclose(got, want, abs_tol=1e-9), f"w = {w}, x = {x}: y({t + 1}) = {got}, expected {want}")

    return _run("ar_as_recurrent: the linear unit reproduces the AR model (w oldest first, as ar_fit gives it)", reproduces)


def check_forward(forward, recurrent_unit) -> bool:
    @_SETTINGS
    @given(st.integers(2, 4), st.integers(1, 4), st.integers(0, 999))
    def batch_properties(B, T, seed):
        seqs, Wrec, Win, Wout = _randn(seed, B, T, 2), _randn(seed + 1, 3, 3) / 2, _randn(seed + 2, 3, 2), _randn(seed + 3, 3, 1)
        y = forward(seqs, Wrec, Win, Wout)
        _require(isinstance(y, torch.Tensor) and y.shape == (B,), f"forward should return shape ({B},); got {getattr(y, 'shape', None)}")
        perm = torch.arange(B).flip(0)
        _require(torch.allclose(forward(seqs[perm], Wrec, Win, Wout), y[perm]),
                 f"B={B}, T={T}: reversing the batch did not reverse the outputs")
        other = seqs.clone()
        other[1:] += 1.0
        _require(torch.allclose(forward(other, Wrec, Win, Wout)[0], y[0]),
                 f"B={B}, T={T}: changing sequences 1.. changed the output for sequence 0")

    def vectorized():
        # forward finds recurrent_unit among the notebook's names when it runs: count the calls it makes.
        names, calls = getattr(forward, "__globals__", {}), []

        def counted(x, *rest):
            calls.append(tuple(getattr(x, "shape", ())))
            return recurrent_unit(x, *rest)

        if names.get("recurrent_unit") is not recurrent_unit:
            return
        B, T = 3, 4
        names["recurrent_unit"] = counted
        try:
            forward(_randn(1, B, T, 2), _randn(2, 3, 3) / 2, _randn(3, 3, 2), _randn(4, 3, 1))
        finally:
            names["recurrent_unit"] = recurrent_unit
        _require(len(calls) == T and all(shape == (B, 2) for shape in calls),
                 f"for a batch of B={B} sequences of length T={T}, forward called recurrent_unit {len(calls)} times "
                 f"(on inputs of shapes {sorted(set(calls))}); call it once per time step, on the whole batch (shape (B, d_in))")

    @_SETTINGS
    @given(st.integers(1, 3), st.integers(1, 4), st.integers(0, 999))
    def composes(B, T, seed):
        # With Wrec = 0 the last state depends on the last input only: a readout of one step of your unit.
        seqs, Win, Wout = _randn(seed, B, T, 2), _randn(seed + 2, 3, 2), _randn(seed + 3, 3, 1)
        Wrec = torch.zeros(3, 3, dtype=seqs.dtype)
        last = recurrent_unit(seqs[:, -1], torch.zeros(B, 3, dtype=seqs.dtype), Wrec, Win)  # (B, 3)
        want = (last @ Wout)[:, 0]
        y = forward(seqs, Wrec, Win, Wout)
        _require(isinstance(y, torch.Tensor) and torch.allclose(y, want),
                 f"B={B}, T={T}: with Wrec = 0, forward should read out (with Wout) your recurrent_unit's state after "
                 f"the last input (max difference {float((torch.as_tensor(y) - want).abs().max()):.3g})")

    ok = _run("forward: with no recurrence, the readout of recurrent_unit's state after the last input", composes)
    ok &= _run("forward: batch order and other sequences do not matter", batch_properties)
    ok &= _run("forward: one call of recurrent_unit per time step, for the whole batch", vectorized)
    return ok


def check_causal_mask(causal_mask) -> bool:
    @_SETTINGS
    @given(st.integers(1, 8))
    def entries(T):
        m = causal_mask(T)
        _require(isinstance(m, torch.Tensor) and m.shape == (T, T), f"causal_mask({T}) should be a ({T}, {T}) tensor")
        for i in range(T):
            for j in range(T):
                ok = m[i, j] == 0 if j <= i else m[i, j] == float("-inf")
                _require(bool(ok), f"causal_mask({T})[{i}, {j}] = {m[i, j].item()}; query {i} "
                                   f"{'may' if j <= i else 'must not'} see key {j}")

    return _run("causal_mask: 0 where j <= i, -inf where j > i", entries)


def check_masked_self_attention(masked_self_attention) -> bool:
    @_SETTINGS
    @given(st.integers(2, 6), st.integers(0, 999))
    def causal(T, seed):
        X, Wq, Wk, Wv = _randn(seed, T, 3), _randn(seed + 1, 3, 2), _randn(seed + 2, 3, 2), _randn(seed + 3, 3, 2)
        Y = masked_self_attention(X, Wq, Wk, Wv)
        _require(isinstance(Y, torch.Tensor) and Y.shape == (T, 2), f"expected shape ({T}, 2); got {getattr(Y, 'shape', None)}")
        X2 = X.clone()
        X2[-1] += 1.0
        Y2 = masked_self_attention(X2, Wq, Wk, Wv)
        _require(torch.allclose(Y[:-1], Y2[:-1], atol=1e-12),
                 f"T={T}: changing the last input changed earlier outputs, so attention looks ahead")

    @_SETTINGS
    @given(st.integers(1, 5), st.integers(1, 4), st.integers(0, 999))
    def matches_torch(T, d_k, seed):
        X, Wq, Wk, Wv = _randn(seed, 2, T, 3), _randn(seed + 1, 3, d_k), _randn(seed + 2, 3, d_k), _randn(seed + 3, 3, 2)
        want = torch.nn.functional.scaled_dot_product_attention(X @ Wq, X @ Wk, X @ Wv, is_causal=True)
        got = masked_self_attention(X, Wq, Wk, Wv)
        _require(isinstance(got, torch.Tensor) and got.shape == want.shape,
                 f"for X of shape {tuple(X.shape)} expected shape {tuple(want.shape)}; got {getattr(got, 'shape', None)}")
        _require(torch.allclose(got, want), f"for X of shape {tuple(X.shape)} and d_k={d_k} the result differs from "
                                            f"torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True) "
                                            f"(max difference {(got - want).abs().max():.3g}); "
                                            f"check the scale 1/sqrt(d_k) and the mask")

    def keeps_the_dtype():
        for dtype in (torch.float16, torch.float32):
            X, Wq, Wk, Wv = (_randn(7 + i, *shape).to(dtype) for i, shape in enumerate([(4, 3), (3, 2), (3, 2), (3, 2)]))
            Y = masked_self_attention(X, Wq, Wk, Wv)
            _require(isinstance(Y, torch.Tensor) and Y.dtype == dtype,
                     f"for {dtype} inputs the result should be {dtype}; got {getattr(Y, 'dtype', type(Y).__name__)} "
                     f"(convert the mask to the scores' dtype)")

    ok = _run("masked_self_attention: outputs do not depend on later inputs", causal)
    ok &= _run("masked_self_attention: float16 and float32 in, the same dtype out", keeps_the_dtype)
    ok &= _run("masked_self_attention: agrees with torch's causal scaled_dot_product_attention", matches_torch)
    return ok


def check_param_counts(qkv_param_count, mha_param_count) -> bool:
    def counts():
        for d_model, n_heads in ((34, 17), (42, 7), (30, 5)):
            q = sum(p.numel() for _ in range(3) for p in torch.nn.Linear(d_model, d_model, bias=False).parameters())
            _require(qkv_param_count(d_model, 5) == q, f"qkv_param_count({d_model}, 5) should equal three bias-free Linear layers")
            for bias in (True, False):
                m = sum(p.numel() for p in torch.nn.MultiheadAttention(d_model, n_heads, bias=bias).parameters())
                got = mha_param_count(d_model, n_heads, bias=bias)
                _require(got == m, f"mha_param_count({d_model}, {n_heads}, bias={bias}) = {got}; torch.nn.MultiheadAttention has {m}")

    def indivisible():
        for d_model, n_heads in ((10, 4), (9, 2)):
            _require_value_error(mha_param_count, d_model, n_heads, why=f"{n_heads} heads do not divide d_model = "
                                 f"{d_model} (torch.nn.MultiheadAttention refuses it too)")

    return (_run("parameter counts agree with torch.nn", counts)
            & _run("mha_param_count: ValueError when n_heads does not divide d_model", indivisible))


one_line_checks(globals())
