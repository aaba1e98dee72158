"""benchmarks/attention.py on the CPU path: the table with its ratios, the plot, the back ends a CPU lacks skipped
with a reason, and a wrong kernel failing its correctness check (exit status 1, not timed)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--device", "cpu", "--tokens", "128", "--hidden", "32", "--d", "16"]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("attention_benchmark", ROOT / "benchmarks" / "attention.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cpu_run_prints_every_back_end_with_ratios_and_a_plot(bench, tmp_path, capsys):
    plot = tmp_path / "attention.png"
    assert bench.main([*TINY, "--N", "32", "64", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "| d | N | causal | ours | flash | math | ours/flash | ours/math |" in out  # forward and backward
    assert out.count("| 16 | 64 | yes |") == 2
    assert "cudnn skipped: " in out and "efficient skipped: " in out  # no CPU kernel: skipped, with the reason
    assert "check (worst error / naive error; the rule: <= 2) ok: ours" in out
    assert plot.stat().st_size > 10_000


def test_a_kernel_that_fails_the_check_is_reported_and_not_timed(bench, monkeypatch, capsys):
    import reference.flash

    real = reference.flash.flash_attention

    def wrong_scale(q, k, v, causal=False, scale=None, **kw):
        return real(q, k, v, causal=causal, scale=1 / q.shape[-1], **kw)

    monkeypatch.setattr(reference.flash, "flash_attention", wrong_scale)
    assert bench.main([*TINY, "--N", "32", "--causal", "no"]) == 1
    out = capsys.readouterr().out
    assert "FAIL: ours" in out and "  ours " not in out  # the failing kernel got no timing line
    assert out.count("| 16 | 32 | no | FAIL |") == 2  # and no figure in either table
