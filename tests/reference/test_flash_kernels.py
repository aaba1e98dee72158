"""The Triton kernels' tuning: every GPU block shape computes the right thing (run here in Triton's interpreter,
with the blocks forced), the configurations keep the invariants the kernels assume, and importing the kernels
touches no GPU driver."""

import itertools
import os
import subprocess
import sys

import pytest
import torch

from reference.flash import dispatch

from . import flash_props as P

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # read when the kernels module is first imported
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
NEEDS_TRITON = pytest.mark.skipif(dispatch.triton_unavailable() is not None, reason=str(dispatch.triton_unavailable()))


def kernel_test(test):
    """Skipped without triton; on a GPU the kernels run compiled there and the test carries the cuda mark."""
    test = NEEDS_TRITON(test)
    return pytest.mark.cuda(test) if DEVICE == "cuda" else test


def _configs():
    from reference.flash.triton_tuning import CONFIGS

    return CONFIGS


def _block_triples():
    """(forward, dK/dV, dQ) block shapes: every shape of every GPU family appears in at least one triple."""
    if dispatch.triton_unavailable():
        return []
    shapes = {
        stage: sorted(
            {c[:2] for fam in ("sm90", "sm80", "fp32") for configs in _configs()[fam][stage].values() for c in configs}
        )
        for stage in ("fwd", "dkdv", "dq")
    }
    longest = max(len(s) for s in shapes.values())
    return [tuple(shapes[s][i % len(shapes[s])] for s in ("fwd", "dkdv", "dq")) for i in range(longest)]


class _Forced(torch.autograd.Function):
    """The kernels with fixed block shapes (what the autotuner would launch with one of its configs)."""

    @staticmethod
    def forward(ctx, q, k, v, causal, blocks):
        from reference.flash.triton_kernels import triton_forward

        out, lse = triton_forward(q, k, v, q.shape[-1] ** -0.5, causal, blocks=blocks[0])
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.causal, ctx.blocks = causal, blocks
        return out, lse

    @staticmethod
    def backward(ctx, d_out, d_lse):
        from reference.flash.triton_kernels import triton_backward

        q, k, v, out, lse = ctx.saved_tensors
        grads = triton_backward(q, k, v, out, lse, d_out, q.shape[-1] ** -0.5, ctx.causal, d_lse, blocks=ctx.blocks[1:])
        return (*grads, None, None)


@kernel_test
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("blocks", _block_triples(), ids=str)
def test_every_gpu_block_shape_meets_the_flash_rule(blocks, causal):
    """The split loops (unmasked blocks, diagonal blocks, ragged last block) with each GPU config's block
    shapes: N is one more than the largest block plus a few, so every stage of every loop runs."""
    n = max(max(b) for b in blocks) + 5
    g = torch.Generator().manual_seed(sum(map(sum, blocks)))
    n_k = n if causal else n - 3
    dtype = torch.float16 if DEVICE == "cuda" else torch.float32  # the interpreter's fp32 dots are exact
    q = torch.randn(1, 2, n, 48, generator=g).to(DEVICE, dtype)  # d = 48: the head dim is padded to a block of 64
    k, v = (torch.randn(1, 2, n_k, 48, generator=g).to(DEVICE, dtype) for _ in range(2))
    P.assert_flash_rule(lambda q, k, v, c: _Forced.apply(q, k, v, c, blocks), q, k, v, causal)


@NEEDS_TRITON
def test_configurations_keep_the_kernels_invariants():
    """Forward and dQ own query blocks made of whole key blocks; dK/dV own key blocks made of whole query
    blocks (the causal diagonal is split along block edges); every GPU family has all three kernels for both
    head-dim classes; the interpreter has exactly one config per kernel (nothing to time)."""
    for fam, stages in _configs().items():
        assert set(stages) == {"fwd", "dkdv", "dq"}, fam
        for stage, by_class in stages.items():
            assert set(by_class) == ({None} if fam == "interpreter" else {64, 128}), (fam, stage)
            for configs in by_class.values():
                assert configs and (fam != "interpreter" or len(configs) == 1), (fam, stage)
                for m, n, warps, stages_ in configs:
                    assert min(m, n) >= 16 and warps in (4, 8) and stages_ >= 1, (fam, stage, m, n)
                    owned, streamed = (n, m) if stage == "dkdv" else (m, n)
                    assert owned % streamed == 0, (fam, stage, m, n)


@NEEDS_TRITON
def test_families_and_pruning():
    from reference.flash import triton_fwd as F
    from reference.flash import triton_tuning as T

    q = torch.zeros(1, 1, 4, 16)
    assert T.family(q, interpreted=False) == "interpreter"  # a CPU tensor never reads a GPU's capability
    T._TUNERS.pop(("_fwd_kernel", "sm90"), None)
    tuner = T._tuned(F._fwd_kernel, "fwd", "sm90")
    small, large = (T.CONFIGS["sm90"]["fwd"][c] for c in (64, 128))
    shapes = lambda cs: [(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages) for c in cs]  # noqa: E731
    assert shapes(T._prune(tuner.configs, {"TUNE_N": 4096}, BLOCK_D=64)) == small
    assert shapes(T._prune(tuner.configs, {"TUNE_N": 4096}, BLOCK_D=128)) == large
    assert shapes(T._prune(tuner.configs, {"TUNE_N": T.SHORT}, BLOCK_D=128)) == large[:1]  # short: first, untimed
    assert len(T._prune(tuner.configs, {"TUNE_N": 4096})) == len(small) + len(large)  # an older triton: no kwargs
    T._TUNERS.pop(("_fwd_kernel", "sm90"))
    assert T.tune_n(3, 1000) == 1024 and T.tune_n(1, 1) == 16


@NEEDS_TRITON
def test_the_kernels_import_and_run_untuned_without_touching_a_gpu_driver():
    """Without TRITON_INTERPRET and without a GPU, importing the kernels must work (triton.runtime.driver.active
    raises on such a machine): the architecture is read at the first call, never at import."""
    code = (
        "import reference.flash.triton_kernels as K, reference.flash.triton_tuning as T\n"
        "print('imported', sorted(T._TUNERS))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "imported []" in result.stdout


@NEEDS_TRITON
def test_the_interpreter_runs_through_the_autotuner_with_one_config():
    """The dispatcher's path in the interpreter goes through triton.autotune with a single config, so nothing
    is timed and no driver is asked for."""
    from reference.flash import flash_attention
    from reference.flash import triton_tuning as T

    if DEVICE == "cuda":
        pytest.skip("on a GPU the autotuner times its configs")
    q, k, v = (torch.randn(1, 1, 40, 16, generator=torch.Generator().manual_seed(i)) for i in range(3))
    q.requires_grad_()
    flash_attention(q, k, v, causal=True, backend="triton").sum().backward()
    names = {name for name, fam in T._TUNERS if fam == "interpreter"}
    assert names == {"_fwd_kernel", "_dkdv_kernel", "_dq_kernel"}, T._TUNERS
    assert all(len(t.configs) == 1 for t in T._TUNERS.values())


def test_block_triples_cover_every_gpu_shape():
    if dispatch.triton_unavailable():
        pytest.skip(str(dispatch.triton_unavailable()))
    triples = _block_triples()
    for fam, (index, stage) in itertools.product(("sm90", "sm80", "fp32"), enumerate(("fwd", "dkdv", "dq"))):
        shapes = {c[:2] for configs in _configs()[fam][stage].values() for c in configs}
        assert shapes <= {t[index] for t in triples}, (fam, stage)
