"""Fused attention: our kernel against every SDPA back end this machine has, measured in the same run.

Timing study (the default). For each case (head dim d, length N, causal or not):
1. correctness first, on fresh inputs of the case's shape: the first (batch, head) slice of the output, the
   LSE and the three gradients is compared with float64 attention. Ours must meet FlashAttention's rule (max
   error at most 2x that of naive attention in the same precision); a case where it does not is marked FAIL,
   is not timed, and makes the exit status 1. The back ends' worst error/naive ratio is printed beside it.
2. timing: on CUDA, ``triton.testing.do_bench`` medians (it warms up, flushes the L2 cache between calls
   and repeats for ``--rep-ms``); on CPU, the median of repeated calls after a warm-up call. Forward alone,
   and backward alone (``autograd.grad`` of a kept forward graph).
3. TFLOP/s, counting 4 B H N^2 d for the forward (halved when causal) and 2.5x that for the backward, and
   the ratio ours / back end of the TFLOP/s (above 1: ours is faster).
Back ends: ``torch.nn.attention.sdpa_kernel`` with FLASH_ATTENTION, CUDNN_ATTENTION, EFFICIENT_ATTENTION (and
MATH on CPU); one that fails on a case is skipped with its reason printed. Ours is the Triton kernel on CUDA
and the tiled torch path on CPU. Shapes fill the machine: B*N = --tokens, H = --hidden / d.

    .venv/bin/python benchmarks/attention.py --device cpu --plot attention-cpu.png   # < 1 min, fp32
    .venv/bin/python benchmarks/attention.py --device cuda --plot attention-gpu.png  # fp16, 16K tokens

Memory study (``--memory``, CPU): naive vs SDPA vs tiled, time and peak memory, one fresh process per case
(the table and docs/attention-benchmark.png of docs/performance.md).
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402

BACKENDS = ("flash", "cudnn", "efficient", "math")


def _header(device: str) -> str:
    import torch
    lines = [f"# {describe()}", f"# torch {torch.__version__}, {datetime.date.today().isoformat()}"]
    if device == "cuda":
        import triton
        lines.append(f"# {torch.cuda.get_device_name()} (sm{''.join(map(str, torch.cuda.get_device_capability()))}), "
                     f"triton {triton.__version__}")
    return "\n".join(lines)


def _methods(device: str) -> dict:
    """name -> fn(q, k, v, causal) -> out (ours also takes return_lse)."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from reference.flash import flash_attention

    ours = "triton" if device == "cuda" else "tiled"
    methods = {"ours": lambda q, k, v, causal, **kw: flash_attention(q, k, v, causal=causal, backend=ours, **kw)}
    kinds = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
             "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}
    for name in BACKENDS if device == "cpu" else BACKENDS[:3]:  # MATH on a GPU: N x N in HBM, not a rival
        def sdpa(q, k, v, causal, _kind=kinds[name]):
            with sdpa_kernel(_kind):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        methods[name] = sdpa
    return methods


def _inputs(B, H, N, d, dtype, device, seed):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    return [torch.randn(B, H, N, d, dtype=dtype, device=device, generator=g).requires_grad_() for _ in range(3)]


def _reference(q, k, v, causal, cot, dtype):
    """Attention of the first (batch, head) slice in ``dtype``, with its LSE and gradients for ``cot``."""
    import torch
    leaves = [t[:1, :1].detach().to(dtype).requires_grad_() for t in (q, k, v)]
    s = (leaves[0] @ leaves[1].transpose(-2, -1)) / math.sqrt(q.shape[-1])  # (1, 1, N, N)
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    acc = torch.promote_types(dtype, torch.float32)
    out = torch.softmax(s.to(acc), -1).to(dtype) @ leaves[2]
    grads = torch.autograd.grad(out, leaves, cot[:1, :1].to(dtype))
    return [out.detach(), torch.logsumexp(s.to(acc), -1).detach(), *grads]


def check(methods, B, H, N, d, dtype, device, causal, seed) -> dict:
    """name -> worst error / naive error over out, (LSE,) dq, dk, dv on fresh inputs, or the reason it failed."""
    import torch
    q, k, v = _inputs(B, H, N, d, dtype, device, seed)
    cot = torch.randn(q.shape, dtype=dtype, device=device, generator=torch.Generator(device=device).manual_seed(seed + 1))
    exact = _reference(q, k, v, causal, cot, torch.float64)
    naive = _reference(q, k, v, causal, cot, dtype)
    floor = 1e-6 if dtype == torch.float32 else 0.0  # fp32: naive attention can be all but exact at small N
    results = {}
    for name, fn in methods.items():
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = list(fn(q, k, v, causal, return_lse=True)) if name == "ours" else [fn(q, k, v, causal)]
            got[1:1] = [] if name == "ours" else [None]  # back ends give no LSE
            got += torch.autograd.grad(got[0], (q, k, v), cot)
        except Exception as exc:  # a back end without a kernel for this shape, dtype or device
            why = [str(w.message).splitlines()[0] for w in caught][:1] or [str(exc).splitlines()[0]]
            results[name] = why[0][:160]
            continue
        worst, ok = 0.0, True
        for g, e, n in zip(got, exact, naive):
            if g is None:
                continue
            err = (g[:1, :1].double() - e).abs().max().item()
            base = (n.double() - e).abs().max().item()
            ok &= err <= 2 * base + floor
            worst = max(worst, err / base if base > 0 else (0.0 if err <= floor else math.inf))
        results[name] = (worst, ok)
        del got
    return results


def _interleaved(calls: dict, min_rounds=5, min_s=1.0, max_rounds=30) -> dict:
    """CPU: median ms of each call, the calls taken in turn round after round (a burst of load from another
    process then slows every method, not one), after a warm-up round."""
    for f in calls.values():
        f()
    times, start = {key: [] for key in calls}, time.perf_counter()
    while len(times[next(iter(calls))]) < min_rounds or (time.perf_counter() - start < min_s
                                                         and len(times[next(iter(calls))]) < max_rounds):
        for key, f in calls.items():
            t = time.perf_counter()
            f()
            times[key].append((time.perf_counter() - t) * 1e3)
    return {key: statistics.median(ts) for key, ts in times.items()}


def timed(methods: dict, q, k, v, causal, device, rep_ms) -> dict:
    """(name, "fwd" or "bwd") -> median ms: the forward alone, the backward alone (a kept forward graph)."""
    import torch
    calls = {}
    for name, fn in methods.items():
        out = fn(q, k, v, causal)
        d_out = torch.randn_like(out)
        calls[name, "fwd"] = lambda fn=fn: fn(q, k, v, causal)
        calls[name, "bwd"] = lambda out=out, d_out=d_out: torch.autograd.grad(out, (q, k, v), d_out, retain_graph=True)
    if device != "cuda":
        return _interleaved(calls)
    from triton.testing import do_bench
    return {key: do_bench(f, warmup=max(25, rep_ms // 4), rep=rep_ms, return_mode="median") for key, f in calls.items()}


def timing_study(args) -> int:
    import torch
    device = args.device
    dtype = getattr(torch, args.dtype or ("float16" if device == "cuda" else "float32"))
    methods = _methods(device)
    unit, per = ("TFLOP/s", 1e12) if device == "cuda" else ("GFLOP/s", 1e9)
    print(_header(device))
    print(f"# {args.dtype or dtype} | B*N = {args.tokens} tokens | hidden {args.hidden} (H = hidden / d) | "
          f"{'do_bench medians' if device == 'cuda' else 'medians of repeated calls'}")
    rows, failed = [], False
    for d in args.d:
        for causal in args.causal:
            for N in args.N:
                B, H = max(1, args.tokens // N), max(1, args.hidden // d)
                case = f"d={d} N={N} causal={'yes' if causal else 'no'} B={B} H={H}"
                checked = check(methods, B, H, N, d, dtype, device, causal, seed=1000 + N + d)
                row = {"d": d, "N": N, "causal": causal, "B": B, "H": H, "fwd": {}, "bwd": {}, "check": checked}
                notes = [f"{m} {r[0]:.2f}" if isinstance(r, tuple) else f"{m} skipped" for m, r in checked.items()]
                ours_ok = isinstance(checked["ours"], tuple) and checked["ours"][1]
                failed |= not ours_ok
                print(f"{case}: check (worst error / naive error; the rule: <= 2) {'ok' if ours_ok else 'FAIL'}: "
                      f"{', '.join(notes)}", flush=True)
                q, k, v = _inputs(B, H, N, d, dtype, device, seed=N + d)
                flop = 4 * B * H * N * N * d * (0.5 if causal else 1.0)
                ok = {m: fn for m, fn in methods.items() if isinstance(checked[m], tuple) and (m != "ours" or ours_ok)}
                ms = timed(ok, q, k, v, causal, device, args.rep_ms)
                for name in ok:
                    fwd, bwd = ms[name, "fwd"], ms[name, "bwd"]
                    row["fwd"][name], row["bwd"][name] = flop * 1e3 / fwd / per, 2.5 * flop * 1e3 / bwd / per
                    print(f"  {name:9s} forward {fwd:9.3f} ms {row['fwd'][name]:7.1f} {unit} | "
                          f"backward {bwd:9.3f} ms {row['bwd'][name]:7.1f} {unit}", flush=True)
                rows.append(row)
                del q, k, v
                if device == "cuda":
                    torch.cuda.empty_cache()
    names = ["ours"] + [m for m in methods if m != "ours" and any(m in r["fwd"] for r in rows)]
    for direction in ("fwd", "bwd"):
        print(f"\n## {'forward' if direction == 'fwd' else 'backward'}: {unit}, and ours / back end")
        rivals = [m for m in names if m != "ours"]
        print("| d | N | causal | " + " | ".join(names) + "".join(f" | ours/{m}" for m in rivals) + " |")
        print("| --- " * (3 + len(names) + len(rivals)) + "|")
        for r in rows:
            t = r[direction]
            failed_here = not (isinstance(r["check"]["ours"], tuple) and r["check"]["ours"][1])
            cells = [_fig(t[m]) if m in t else ("FAIL" if m == "ours" and failed_here else "-") for m in names]
            ratios = [f"{t['ours'] / t[m]:.2f}" if "ours" in t and m in t else "-" for m in rivals]
            print(f"| {r['d']} | {r['N']} | {'yes' if r['causal'] else 'no'} | " + " | ".join(cells + ratios) + " |")
    skipped = {f"{m} skipped: {r}" for row in rows for m, r in row["check"].items() if isinstance(r, str)}
    for line in sorted(skipped):
        print(f"# {line}")
    if device == "cuda":
        from reference.flash.triton_tuning import chosen_configs
        print("\n# configs the autotuner chose:\n" + "\n".join(f"#   {line}" for line in chosen_configs()))
    if args.plot:
        _plot_timing(rows, names, args, str(dtype).replace("torch.", ""), unit)
    return 1 if failed else 0


def _fig(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.2g}"


def _plot_timing(rows, names, args, dtype, unit):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(d, c) for d in args.d for c in args.causal]
    fig, axes = plt.subplots(2, len(panels), figsize=(4 * len(panels), 6.5), squeeze=False)
    for col, (d, causal) in enumerate(panels):
        for row_i, direction in enumerate(("fwd", "bwd")):
            ax = axes[row_i][col]
            for m in names:
                pts = [(r["N"], r[direction][m]) for r in rows if r["d"] == d and r["causal"] == causal and m in r[direction]]
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=m)
            ax.set_xscale("log", base=2)
            ax.set_title(f"{'forward' if direction == 'fwd' else 'backward'}, d={d}{', causal' if causal else ''}")
            ax.set_xlabel("sequence length N")
            ax.set_ylabel(unit)
            ax.legend(fontsize=8)
    fig.suptitle(f"attention on {args.device}, {dtype}, B*N = {args.tokens}, hidden {args.hidden}")
    fig.tight_layout()
    fig.savefig(args.plot, dpi=100)
    print(f"\nplot: {args.plot}")


# --- memory study: naive vs SDPA vs tiled, one fresh process per case ----------------------------------------

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

    fn = {"naive": naive, "sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
          "tiled": lambda: flash_attention(q, k, v, causal=causal, backend="tiled")}[method]
    base, times = _rss_mb(), []
    for _ in range(2 if N >= 8192 else 3):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base
    return {"method": method, "N": N, "seconds": min(times), "peak_mb": max(peak, 0.0)}


def memory_study(args) -> int:
    methods = ("naive", "sdpa", "tiled")
    print(f"# {describe()}\n# CPU fp32, B*H = {args.B * args.H}, d = {args.mem_d}, causal = {args.causal == [True]}; "
          "time: best of 2-3 calls; memory: peak RSS above the inputs")
    print(f"{'method':8s} {'N':>6s} {'time (s)':>10s} {'peak MB':>10s}")
    rows = {}
    for N in args.N:
        for m in methods:
            cmd = [sys.executable, __file__, "--memory-one", m, str(N), "--B", str(args.B), "--H", str(args.H),
                   "--mem-d", str(args.mem_d), "--causal", *("yes" if c else "no" for c in args.causal)]
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


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--dtype", default=None, help="float16 (CUDA default), bfloat16 or float32 (CPU default)")
    p.add_argument("--tokens", type=int, default=None, help="B*N (CUDA: 16384, CPU: 1024)")
    p.add_argument("--hidden", type=int, default=None, help="H*d (CUDA: 2048, CPU: 256)")
    p.add_argument("--d", type=int, nargs="+", default=None, help="head dims (CUDA: 64 128, CPU: 64)")
    p.add_argument("--N", type=int, nargs="+", default=None, help="lengths (CUDA: 512 ... 16384, CPU: 128 256 512)")
    p.add_argument("--causal", nargs="+", choices=("no", "yes"), default=["no", "yes"])
    p.add_argument("--rep-ms", type=int, default=200, help="do_bench's repetition time per measurement (CUDA)")
    p.add_argument("--plot", default=None, help="write a plot (PNG) here")
    p.add_argument("--memory", action="store_true", help="the memory study (CPU) instead of the timing study")
    p.add_argument("--B", type=int, default=2, help="--memory: batch")
    p.add_argument("--H", type=int, default=4, help="--memory: heads")
    p.add_argument("--mem-d", type=int, default=64, help="--memory: head dim")
    p.add_argument("--memory-one", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.causal = [c == "yes" for c in args.causal]
    cuda = args.device == "cuda"
    if args.memory or args.memory_one:
        args.N = args.N or [1024, 2048, 4096, 8192, 16384]
        args.causal = args.causal if len(args.causal) == 1 else [False]
    else:
        args.tokens = args.tokens or (16384 if cuda else 1024)
        args.hidden = args.hidden or (2048 if cuda else 256)
        args.d = args.d or ([64, 128] if cuda else [64])
        args.N = args.N or ([512, 1024, 2048, 4096, 8192, 16384] if cuda else [128, 256, 512])
    return args


def main(argv=None) -> int:
    args = _parse(argv)
    if args.memory_one:
        print(json.dumps(memory_one(args.memory_one[0], int(args.memory_one[1]), args)))
        return 0
    if args.memory:
        return memory_study(args)
    if args.device == "cuda":
        import torch
        if not torch.cuda.is_available():
            print("no CUDA device here; run with --device cpu", file=sys.stderr)
            return 2
    return timing_study(args)


if __name__ == "__main__":
    sys.exit(main())
