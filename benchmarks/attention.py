"""Attention benchmark: naive vs torch SDPA vs our tiled path vs our Triton kernel (CUDA only).

Each (method, N) case runs in a fresh subprocess so that its peak memory is its own: on CPU the peak
resident set size above the inputs, on CUDA ``torch.cuda.max_memory_allocated``. Prints time, peak
memory and (on GPU) TFLOP/s, with ratios measured in the same run, and saves a plot.

    .venv/bin/python benchmarks/attention.py                 # CPU: B*H = 8, d = 64, fp32, N up to 16384
    .venv/bin/python benchmarks/attention.py --device cuda   # GPU: fp16, forward and backward, causal and not
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_one(method: str, N: int, device: str, dtype_name: str, causal: bool, backward: bool, B: int, H: int, d: int) -> dict:
    import torch
    import torch.nn.functional as F

    sys.path.insert(0, str(ROOT))
    from reference.flash import flash_attention

    torch.manual_seed(0)
    dtype = getattr(torch, dtype_name)
    q, k, v = (torch.randn(B, H, N, d, device=device, dtype=dtype, requires_grad=backward) for _ in range(3))

    def naive():
        s = (q @ k.transpose(-2, -1)) * (1 / math.sqrt(d))  # (B, H, N, N): the whole score matrix
        if causal:
            s = s.masked_fill(torch.ones(N, N, dtype=torch.bool, device=device).triu(1), float("-inf"))
        return torch.softmax(s, dim=-1) @ v

    fns = {
        "naive": naive,
        "sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
        "tiled": lambda: flash_attention(q, k, v, causal=causal, backend="tiled"),
        "triton": lambda: flash_attention(q, k, v, causal=causal, backend="triton"),
    }
    fn = fns[method]
    if device == "cuda" and method == "sdpa":
        from torch.nn.attention import SDPBackend, sdpa_kernel
        inner = fn
        fn = lambda: _with(sdpa_kernel(SDPBackend.FLASH_ATTENTION), inner)  # noqa: E731
    do = torch.randn(B, H, N, d, device=device, dtype=dtype) if backward else None

    def step():
        out = fn()
        if backward:
            torch.autograd.grad(out, (q, k, v), do)
        return out

    if device == "cuda":
        step()  # compile / warm up
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        reps = 10
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            step()
        end.record()
        torch.cuda.synchronize()
        seconds = start.elapsed_time(end) / 1000 / reps
        peak = (torch.cuda.max_memory_allocated() - base) / 2**20
    else:
        torch.set_num_threads(int(os.environ.get("BENCH_THREADS", os.cpu_count() or 1)))
        base = _rss_mb()
        times = []
        for _ in range(2 if N >= 8192 else 3):
            t = time.perf_counter()
            step()
            times.append(time.perf_counter() - t)
        seconds = min(times)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base
    flops = 4 * B * H * N * N * d * (0.5 if causal else 1.0) * (3.5 if backward else 1.0)  # bwd ~2.5x fwd
    return {"method": method, "N": N, "seconds": seconds, "peak_mb": max(peak, 0.0), "tflops": flops / seconds / 1e12}


def _with(ctx, fn):
    with ctx:
        return fn()


def measure(method, N, args) -> dict:
    cmd = [sys.executable, __file__, "--one", method, str(N), "--device", args.device, "--dtype", args.dtype,
           "--B", str(args.B), "--H", str(args.H), "--d", str(args.d)] + (["--causal"] if args.causal else []) + \
          (["--backward"] if args.backward else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        reason = "out of memory" if proc.returncode in (-9, 137) or "memory" in proc.stderr.lower() else proc.stderr.strip().splitlines()[-1:]
        return {"method": method, "N": N, "error": str(reason)}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--one", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--dtype", default=None)
    p.add_argument("--B", type=int, default=2)
    p.add_argument("--H", type=int, default=4)
    p.add_argument("--d", type=int, default=64)
    p.add_argument("--N", type=int, nargs="*", default=None)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--backward", action="store_true")
    p.add_argument("--plot", default=str(ROOT / "docs" / "attention-benchmark.png"))
    args = p.parse_args(argv)
    args.dtype = args.dtype or ("float16" if args.device == "cuda" else "float32")
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.device, args.dtype, args.causal, args.backward,
                                 args.B, args.H, args.d)))
        return 0
    Ns = args.N or ([1024, 2048, 4096, 8192, 16384] if args.device == "cpu" else [1024, 2048, 4096, 8192, 16384])
    methods = ["naive", "sdpa", "tiled"] + (["triton"] if args.device == "cuda" else [])
    print(f"# {describe()}")
    print(f"# device={args.device} dtype={args.dtype} B*H={args.B * args.H} d={args.d} causal={args.causal} backward={args.backward}")
    rows = {}
    print(f"{'method':8s} {'N':>6s} {'time (s)':>10s} {'peak MB':>10s} {'TFLOP/s':>8s}")
    for N in Ns:
        for m in methods:
            r = measure(m, N, args)
            rows[(m, N)] = r
            if "error" in r:
                print(f"{m:8s} {N:6d} {'-':>10s} {'-':>10s} {'-':>8s}  {r['error']}")
            else:
                print(f"{m:8s} {N:6d} {r['seconds']:10.4f} {r['peak_mb']:10.1f} {r['tflops']:8.3f}", flush=True)
    print("\n# ratios in this run")
    for N in Ns:
        t, s, n = rows.get(("tiled", N), {}), rows.get(("sdpa", N), {}), rows.get(("naive", N), {})
        parts = [f"N={N}"]
        if "seconds" in t and "seconds" in s:
            parts.append(f"tiled/sdpa time {t['seconds'] / s['seconds']:.2f}x")
        if "peak_mb" in t and "peak_mb" in n and n["peak_mb"] > 0:
            parts.append(f"tiled/naive peak memory {t['peak_mb'] / n['peak_mb']:.3f}")
        tr = rows.get(("triton", N), {})
        if "tflops" in tr and "tflops" in s:
            parts.append(f"triton/sdpa TFLOP/s {tr['tflops'] / s['tflops']:.2f}x")
        print("  " + ", ".join(parts))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        for m in methods:
            pts = [(N, rows[(m, N)]) for N in Ns if "seconds" in rows[(m, N)]]
            axes[0].plot([n for n, _ in pts], [r["seconds"] for _, r in pts], marker="o", label=m)
            axes[1].plot([n for n, _ in pts], [r["peak_mb"] for _, r in pts], marker="o", label=m)
        for ax, label in zip(axes, ("time (s)", "peak memory (MB)")):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("sequence length N")
            ax.set_ylabel(label)
            ax.legend()
        fig.suptitle(f"attention, {args.device}, {args.dtype}, B*H={args.B * args.H}, d={args.d}")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(f"\nplot: {args.plot}")
    except Exception as exc:  # the numbers above stand without the picture
        print(f"(no plot: {exc})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
