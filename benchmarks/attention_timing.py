"""The timing study of benchmarks/attention.py: each case checked, then timed forward and backward, the tables of
FLOP/s and ratios, and the plot."""

from __future__ import annotations

import datetime
import statistics
import time

from attention_correctness import attention_methods, check, random_inputs
from machine import describe


def _header(device: str) -> str:
    import torch

    lines = [f"# {describe()}", f"# torch {torch.__version__}, {datetime.date.today().isoformat()}"]
    if device == "cuda":
        import triton

        lines.append(
            f"# {torch.cuda.get_device_name()} (sm{''.join(map(str, torch.cuda.get_device_capability()))}), "
            f"triton {triton.__version__}"
        )
    return "\n".join(lines)


def _interleaved(calls: dict, min_rounds=5, min_s=1.0, max_rounds=30) -> dict:
    """CPU: median ms of each call, the calls taken in turn round after round (a burst of load from another
    process then slows every method, not one), after a warm-up round."""
    for f in calls.values():
        f()
    times, start = {key: [] for key in calls}, time.perf_counter()
    while len(times[next(iter(calls))]) < min_rounds or (
        time.perf_counter() - start < min_s and len(times[next(iter(calls))]) < max_rounds
    ):
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
    methods = attention_methods(device)
    unit, per = ("TFLOP/s", 1e12) if device == "cuda" else ("GFLOP/s", 1e9)
    print(_header(device))
    print(
        f"# {args.dtype or dtype} | B*N = {args.tokens} tokens | hidden {args.hidden} (H = hidden / d) | "
        f"{'do_bench medians' if device == 'cuda' else 'medians of repeated calls'}"
    )
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
                print(
                    f"{case}: check (worst error / naive error; the rule: <= 2) {'ok' if ours_ok else 'FAIL'}: "
                    f"{', '.join(notes)}",
                    flush=True,
                )
                q, k, v = random_inputs(B, H, N, d, dtype, device, seed=N + d)
                flop = 4 * B * H * N * N * d * (0.5 if causal else 1.0)
                ok = {m: fn for m, fn in methods.items() if isinstance(checked[m], tuple) and (m != "ours" or ours_ok)}
                ms = timed(ok, q, k, v, causal, device, args.rep_ms)
                for name in ok:
                    fwd, bwd = ms[name, "fwd"], ms[name, "bwd"]
                    row["fwd"][name], row["bwd"][name] = flop * 1e3 / fwd / per, 2.5 * flop * 1e3 / bwd / per
                    print(
                        f"  {name:9s} forward {fwd:9.3f} ms {row['fwd'][name]:7.1f} {unit} | "
                        f"backward {bwd:9.3f} ms {row['bwd'][name]:7.1f} {unit}",
                        flush=True,
                    )
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
                pts = [
                    (r["N"], r[direction][m])
                    for r in rows
                    if r["d"] == d and r["causal"] == causal and m in r[direction]
                ]
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
