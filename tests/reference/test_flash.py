"""Fused attention: merge laws, the tiled path and the Triton kernels (interpreter on CPU, compiled on CUDA)."""

import os

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.flash import dispatch, flash_attention, merge_partials

from . import flash_props as P

CUDA = torch.cuda.is_available()
if not CUDA:
    os.environ.setdefault("TRITON_INTERPRET", "1")  # read when the kernels module is first imported
DEVICE = "cuda" if CUDA else "cpu"


def attn(backend):
    def run(q, k, v, causal):
        return flash_attention(q, k, v, causal=causal, return_lse=True, backend=backend)

    return run


def qkv(seed, B, H, N_q, N_k, d, dtype, device="cpu", scale=1.0):
    g = torch.Generator().manual_seed(seed)
    make = lambda n: (torch.randn(B, H, n, d, generator=g, dtype=torch.float64) * scale).to(dtype).to(device)  # noqa: E731
    return make(N_q), make(N_k), make(N_k)


# --- the merge rule ------------------------------------------------------------------------------------


@given(
    st.integers(0, 2**16),
    st.integers(1, 24),
    st.lists(st.integers(0, 24), max_size=5),
    st.sampled_from([1.0, 30.0, 1e4]),
)
def test_merge_laws_hold_for_any_partition(seed, n_k, cuts, spread):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(3, 2, n_k, generator=g, dtype=torch.float64) * spread  # scores up to ~1e4
    v = torch.randn(3, n_k, 4, generator=g, dtype=torch.float64)  # (batch, n_k, d); scores are (batch, n_q, n_k)
    P.assert_merge_laws(merge_partials, scores, v, [c for c in cuts if c <= n_k])


def _merge_without_max_subtraction(a, b):
    (la, oa), (lb, ob) = a, b
    wa, wb = torch.exp(la), torch.exp(lb)  # overflows for large scores
    lse = torch.log(wa + wb)
    return lse, (wa / (wa + wb))[..., None] * oa + (wb / (wa + wb))[..., None] * ob


def test_merge_laws_catch_a_merge_without_max_subtraction():
    scores = torch.tensor([[1e4, 1e4 - 1.0, 3.0]], dtype=torch.float64)
    v = torch.eye(3, dtype=torch.float64)[None]
    with pytest.raises(AssertionError):
        P.assert_merge_laws(_merge_without_max_subtraction, scores, v, [1, 2])


def test_merge_rejects_mismatched_partials():
    with pytest.raises(ValueError, match="matching shapes"):
        merge_partials((torch.zeros(2), torch.zeros(2, 3)), (torch.zeros(3), torch.zeros(3, 3)))


# --- the tiled path (any N; also at sizes spanning several blocks) ----------------------------------------


@given(
    seed=st.integers(0, 2**16),
    N=st.integers(1, 600),
    d=st.sampled_from([8, 16, 64]),
    dtype=st.sampled_from([torch.float32, torch.float16]),
    causal=st.booleans(),
)
def test_tiled_path_meets_the_flash_rule(seed, N, d, dtype, causal):
    q, k, v = qkv(seed, 1, 2, N, N, d, dtype)
    P.assert_flash_rule(attn("tiled"), q, k, v, causal, grads=N <= 300)


@given(seed=st.integers(0, 2**16), N_q=st.integers(1, 300), N_k=st.integers(1, 300))
def test_tiled_path_handles_different_query_and_key_lengths(seed, N_q, N_k):
    q, k, v = qkv(seed, 2, 1, N_q, N_k, 16, torch.float32)
    P.assert_flash_rule(attn("tiled"), q, k, v, False)


@given(seed=st.integers(0, 2**16), N=st.integers(2, 520), data=st.data())
def test_tiled_path_is_causal(seed, N, data):
    q, k, v = qkv(seed, 1, 2, N, N, 16, torch.float32)
    P.assert_causal(attn("tiled"), q, k, v, data.draw(st.integers(1, N - 1)))


@given(seed=st.integers(0, 2**16), N=st.integers(1, 300))
def test_tiled_path_is_permutation_equivariant(seed, N):
    q, k, v = qkv(seed, 1, 2, N, N, 16, torch.float64)
    g = torch.Generator().manual_seed(seed)
    P.assert_permutation_equivariant(
        attn("tiled"), q, k, v, torch.randperm(N, generator=g), torch.randperm(N, generator=g)
    )


def test_causality_property_catches_a_mask_off_by_one():
    def leaky(q, k, v, causal):  # lets each query see one key into the future
        s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        future = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(2)
        return torch.softmax(s.masked_fill(future, float("-inf")), -1) @ v, None

    q, k, v = qkv(0, 1, 1, 8, 8, 16, torch.float32)
    with pytest.raises(AssertionError, match="before position"):
        P.assert_causal(leaky, q, k, v, 4)


def test_flash_rule_catches_a_wrong_scale():
    def wrong(q, k, v, causal):
        return flash_attention(q, k, v, causal=causal, scale=1 / q.shape[-1], return_lse=True, backend="tiled")

    q, k, v = qkv(1, 1, 1, 20, 20, 16, torch.float32)
    with pytest.raises(AssertionError):
        P.assert_flash_rule(wrong, q, k, v, False)


# --- the helpers make every tensor on the inputs' device ----------------------------------------------
# On a GPU, a cotangent or mask made without the inputs' device lands on the CPU and autograd stops with
# "invalid gradient at index 0 - expected device cuda:0 but got cpu". A CPU has no second device, but with
# 'meta' as the default device the same mistake puts the tensor on 'meta', and the first operation mixing it
# with the CPU inputs raises the same way.


@pytest.mark.parametrize("backend", ["tiled", "triton"])
def test_property_helpers_make_every_tensor_on_the_inputs_device(backend):
    if backend == "triton" and dispatch.triton_unavailable():
        pytest.skip(str(dispatch.triton_unavailable()))
    if backend == "triton" and CUDA:
        pytest.skip("the kernels are compiled here, not interpreted: the cuda tests run the helpers on cuda tensors")
    q, k, v = qkv(5, 1, 2, 40, 40, 16, torch.float32)
    g = torch.Generator().manual_seed(5)
    perm_q, perm_k = torch.randperm(40, generator=g), torch.randperm(40, generator=g)
    scores = torch.randn(3, 2, 9, generator=g, dtype=torch.float64)
    values = torch.randn(3, 9, 4, generator=g, dtype=torch.float64)
    with torch.device("meta"):
        for causal in (False, True):
            P.assert_flash_rule(attn(backend), q, k, v, causal)
            P.gradient_floors(q, k, v, torch.ones_like(q), causal)
        P.assert_causal(attn(backend), q, k, v, 17)
        P.assert_permutation_equivariant(attn(backend), q, k, v, perm_q, perm_k)
        P.assert_merge_laws(merge_partials, scores, values, [2, 5])


def test_the_meta_default_device_catches_a_tensor_made_without_the_inputs_device():
    """What the helpers did before issue 39 (the cotangent made on the default device) fails under the guard
    above with the error the GPU run gave, so the guard can fail."""
    q, k, v = (t.requires_grad_() for t in qkv(5, 1, 1, 8, 8, 16, torch.float32))
    out = flash_attention(q, k, v, backend="tiled")
    with torch.device("meta"), pytest.raises(RuntimeError, match="expected device cpu but got meta"):
        torch.autograd.grad(out, (q, k, v), torch.randn(out.shape, generator=torch.Generator().manual_seed(0)))


# --- the Triton kernels (interpreter on CPU: N <= 256 keeps it quick) ----------------------------------

NEEDS_TRITON = pytest.mark.skipif(dispatch.triton_unavailable() is not None, reason=str(dispatch.triton_unavailable()))


def kernel_test(test):
    """A test of the Triton kernels: skipped without triton. On a GPU the kernels run compiled there and the
    test carries the cuda mark (`pytest -m cuda` runs it); on a CPU they run in the interpreter, unmarked."""
    test = NEEDS_TRITON(test)
    return pytest.mark.cuda(test) if CUDA else test


INTERPRETER = settings(max_examples=15)  # each example runs the kernels in Triton's (slow) interpreter


@kernel_test
@INTERPRETER
@given(
    seed=st.integers(0, 2**16),
    N=st.integers(1, 160),
    d=st.sampled_from([16, 24, 64]),
    dtype=st.sampled_from([torch.float32, torch.float16]),
    causal=st.booleans(),
)
def test_triton_kernels_meet_the_flash_rule(seed, N, d, dtype, causal):
    q, k, v = qkv(seed, 1, 2, N, N, d, dtype, DEVICE)
    P.assert_flash_rule(attn("triton"), q, k, v, causal)


@kernel_test
@INTERPRETER
@given(seed=st.integers(0, 2**16), N_q=st.integers(1, 100), N_k=st.integers(1, 100))
def test_triton_kernels_handle_different_query_and_key_lengths(seed, N_q, N_k):
    q, k, v = qkv(seed, 1, 1, N_q, N_k, 32, torch.float32, DEVICE)
    P.assert_flash_rule(attn("triton"), q, k, v, False)


@kernel_test
@INTERPRETER
@given(seed=st.integers(0, 2**16), N=st.integers(2, 200), data=st.data())
def test_triton_kernels_are_causal(seed, N, data):
    q, k, v = qkv(seed, 1, 1, N, N, 16, torch.float32, DEVICE)
    P.assert_causal(attn("triton"), q, k, v, data.draw(st.integers(1, N - 1)))


@kernel_test
@INTERPRETER
@given(seed=st.integers(0, 2**16), N=st.integers(1, 120))
def test_triton_kernels_are_permutation_equivariant(seed, N):
    q, k, v = qkv(seed, 1, 1, N, N, 16, torch.float32, DEVICE)
    g = torch.Generator().manual_seed(seed)
    P.assert_permutation_equivariant(
        attn("triton"), q, k, v, torch.randperm(N, generator=g), torch.randperm(N, generator=g)
    )


@kernel_test
def test_triton_kernels_accept_non_contiguous_inputs():
    q, k, v = qkv(3, 1, 2, 50, 50, 32, torch.float32, DEVICE)
    qt = q.transpose(1, 2).contiguous().transpose(1, 2)  # same values, other strides
    assert not qt.is_contiguous()
    torch.testing.assert_close(flash_attention(qt, k, v, backend="triton"), flash_attention(q, k, v, backend="triton"))


@NEEDS_TRITON
@pytest.mark.cuda
@pytest.mark.skipif(not CUDA, reason="bfloat16 kernels need a CUDA GPU (the interpreter computes bf16 wrongly)")
@pytest.mark.parametrize("causal", [False, True])
def test_triton_bf16_on_gpu(causal):
    q, k, v = qkv(0, 2, 4, 1000, 1000, 64, torch.bfloat16, "cuda")
    P.assert_flash_rule(attn("triton"), q, k, v, causal)


# --- bad input ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: (torch.zeros(2, 3, 4), torch.zeros(2, 3, 4), torch.zeros(2, 3, 4)), "(B, H, N, d)"),
        (lambda: (torch.zeros(1, 1, 4, 8), torch.zeros(1, 1, 4, 16), torch.zeros(1, 1, 4, 16)), "head dim"),
        (lambda: (torch.zeros(1, 1, 4, 8), torch.zeros(1, 1, 5, 8), torch.zeros(1, 1, 4, 8)), "number of keys"),
        (
            lambda: (torch.zeros(1, 1, 4, 8), torch.zeros(1, 1, 4, 8, dtype=torch.float64), torch.zeros(1, 1, 4, 8)),
            "dtype",
        ),
        (lambda: (torch.zeros(1, 1, 4, 8), torch.zeros(2, 1, 4, 8), torch.zeros(2, 1, 4, 8)), "(B, H)"),
        (lambda: (torch.zeros(1, 1, 4, 8, dtype=torch.int64),) * 3, "not supported"),
        (lambda: (torch.zeros(1, 1, 4, 8), torch.zeros(1, 1, 0, 8), torch.zeros(1, 1, 0, 8)), "at least one key"),
    ],
)
def test_bad_inputs_raise_value_errors_naming_the_problem(make, words):
    with pytest.raises(ValueError) as info:
        flash_attention(*make())
    assert words in str(info.value)


def test_causal_needs_equal_lengths_and_triton_needs_supported_head_dims():
    q, k, v = qkv(0, 1, 1, 4, 6, 8, torch.float32)
    with pytest.raises(ValueError, match="N_q == N_k"):
        flash_attention(q, k, v, causal=True)
    q, k, v = qkv(0, 1, 1, 4, 4, 8, torch.float32)
    with pytest.raises(ValueError, match="16 <= d <= 128"):
        flash_attention(q, k, v, backend="triton")
    with pytest.raises(ValueError, match="scale"):
        flash_attention(q, k, v, scale=-1.0)


@given(
    seed=st.integers(0, 2**16),
    N_q=st.integers(1, 40),
    N_k=st.integers(1, 40),
    bq=st.integers(1, 9),
    bk=st.integers(1, 9),
    causal=st.booleans(),
)
def test_tiled_path_is_exact_for_any_tile_sizes(seed, N_q, N_k, bq, bk, causal):
    """Many small tiles (ragged last tiles, diagonal tiles) give fp64 attention, values and gradients."""
    from reference.flash.tiled import tiled_backward, tiled_forward

    N_k = N_q if causal else N_k
    q, k, v = qkv(seed, 1, 2, N_q, N_k, 3, torch.float64)
    out, lse = tiled_forward(q, k, v, 0.7, causal, block_q=bq, block_k=bk)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    ref, ref_lse = P.naive(*leaves, causal, scale=0.7)
    torch.testing.assert_close(out, ref.detach(), rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(lse, ref_lse.double().detach(), rtol=1e-10, atol=1e-12)
    d_out = torch.randn(ref.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    grads = tiled_backward(q, k, v, out, lse, d_out, 0.7, causal, block_q=bq, block_k=bk)
    for got, want in zip(grads, torch.autograd.grad(ref, leaves, d_out)):
        torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-11)


def test_permutation_property_catches_position_dependent_attention():
    def positional(q, k, v, causal):  # adds a bias that depends on each key's position
        s = (
            q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
            + torch.arange(k.shape[-2], dtype=q.dtype, device=q.device) * 0.1
        )
        return torch.softmax(s, -1) @ v, None

    q, k, v = qkv(2, 1, 1, 6, 6, 16, torch.float64)
    with pytest.raises(AssertionError, match="permuting keys"):
        P.assert_permutation_equivariant(positional, q, k, v, torch.arange(6), torch.arange(6).flip(0))


def test_without_triton_auto_uses_the_tiled_path_and_triton_says_why(monkeypatch):
    """Where triton is missing (a Mac, a Linux laptop without it), everything but the kernels works."""
    monkeypatch.setattr(dispatch, "triton_unavailable", lambda: "triton is not installed (test)")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    q, k, v = qkv(0, 1, 1, 20, 20, 16, torch.float32)
    out = flash_attention(q, k, v)  # auto: would pick the interpreter, now the tiled path
    torch.testing.assert_close(out, flash_attention(q, k, v, backend="tiled"))
    with pytest.raises(ValueError, match="unavailable: triton is not installed"):
        flash_attention(q, k, v, backend="triton")


def test_everything_but_the_kernels_imports_and_runs_without_triton():
    """In a fresh interpreter where `import triton` fails (a Mac), the grader, the registry and the fused
    attention's tiled path work, and asking for the kernels says why they are unavailable."""
    import subprocess
    import sys

    code = """
import sys
sys.modules["triton"] = None  # import triton now raises ImportError, as where it is not installed
import torch
import grader.cli, grader.assignments.registry, reference
from reference.flash import flash_attention
q = torch.randn(1, 1, 8, 16)
out = flash_attention(q, q, q)
try:
    flash_attention(q, q, q, backend="triton")
except ValueError as exc:
    print("refused:", exc)
print("ok", tuple(out.shape), len(grader.assignments.registry.ASSIGNMENTS))
"""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "refused: the Triton kernels are unavailable: triton is not installed" in result.stdout, result.stdout
    assert "ok (1, 1, 8, 16)" in result.stdout
