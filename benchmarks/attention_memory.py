"""The memory study of benchmarks/attention.py (``--memory``, CPU): naive vs SDPA vs tiled, time and peak memory,
one fresh process per case."""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from machine import describe

SCRIPT = Path(__file__).resolve().with_name("attention.py")  # runs one case with --memory-one


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def memory_one(method: str, N: int, args) -> dict:
    import torch
    import torch.nn.functional as F

    from reference.flash import flash_attention

    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", os.cpu_count() or 1)))
    q, k, v = (torch.randn(args.B, args.H, N, args.mem_d, generator=torch.Generator().manual_seed(i)) for i in range(3))
    causal = args.causal == [True]

    def naive():
        s = (q @ k.transpose(-2, -1)) / math.sqrt(args.mem_d)  # (B, H, N, N): the whole score matrix
        if causal:
            s = s.masked_fill(torch.ones(N, N, dtype=torch.bool).triu(1), float("-inf"))
        return torch.softmax(s, dim=-1) @ v

    fn = {
        "naive": naive,
        "sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
        "tiled": lambda: flash_attention(q, k, v, causal=causal, backend="tiled"),
    }[method]
    base, times = _rss_mb(), []
    for _ in range(2 if N >= 8192 else 3):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base
    return {"method": method, "N": N, "seconds": min(times), "peak_mb": max(peak, 0.0)}


def memory_study(args) -> int:
    methods = ("naive", "sdpa", "tiled")
    print(
        f"# {describe()}\n# CPU fp32, B*H = {args.B * args.H}, d = {args.mem_d}, causal = {args.causal == [True]}; "
        "time: best of 2-3 calls; memory: peak RSS above the inputs"
    )
    print(f"{'method':8s} {'N':>6s} {'time (s)':>10s} {'peak MB':>10s}")
    rows = {}
    for N in args.N:
        for m in methods:
            cmd = [
                sys.executable,
                str(SCRIPT),
                "--memory-one",
                m,
                str(N),
                "--B",
                str(args.B),
                "--H",
                str(args.H),
                "--mem-d",
                str(args.mem_d),
                "--causal",
                *("yes" if c else "no" for c in args.causal),
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
            if proc.returncode != 0:
                rows[m, N] = {"error": "out of memory" if proc.returncode in (-9, 137) else proc.stderr.strip()[-200:]}
                print(f"{m:8s} {N:6d} {'-':>10s} {'-':>10s}  {rows[m, N]['error']}")
                continue
            rows[m, N] = r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"{m:8s} {N:6d} {r['seconds']:10.4f} {r['peak_mb']:10.1f}", flush=True)
    print("\n# ratios in this run")
    for N in args.N:
        t, s, n = rows[("tiled", N)], rows[("sdpa", N)], rows[("naive", N)]
        parts = [f"N={N}"]
        if "seconds" in t and "seconds" in s:
            parts.append(f"tiled/sdpa time {t['seconds'] / s['seconds']:.2f}x")
        if "peak_mb" in t and n.get("peak_mb", 0) > 0:
            parts.append(f"tiled/naive peak memory {t['peak_mb'] / n['peak_mb']:.3f}")
        print("  " + ", ".join(parts))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        for m in methods:
            pts = [(N, rows[(m, N)]) for N in args.N if "seconds" in rows[(m, N)]]
            axes[0].plot([n for n, _ in pts], [r["seconds"] for _, r in pts], marker="o", label=m)
            axes[1].plot([n for n, _ in pts], [r["peak_mb"] for _, r in pts], marker="o", label=m)
        for ax, label in zip(axes, ("time (s)", "peak memory (MB)")):
            ax.set(xscale="log", yscale="log", xlabel="sequence length N", ylabel=label)
            ax.set_xscale("log", base=2)
            ax.legend()
        fig.suptitle(f"attention, cpu, float32, B*H={args.B * args.H}, d={args.mem_d}")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(f"\nplot: {args.plot}")
    return 0
