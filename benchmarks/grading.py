"""Grading throughput: seqgrade batch vs nbgrader autograde vs an in-process lower bound, in one run.

    .venv/bin/python benchmarks/grading.py            # N = 100 submissions, --workers = cores
    .venv/bin/python benchmarks/grading.py --n 20 --nbgrader-sample 0   # nbgrader on all of them

1. N submissions of sequence_models (correct, partly wrong, hostile, invalid; deterministic from --seed);
2. nbgrader: a temporary course built from seqgrade's source, ``generate_assignment`` then ``autograde``
   (its hidden test cells call seqgrade's checks, as the assignment ships). nbgrader grades one notebook
   at a time at several seconds each, so by default it grades an evenly spaced sample of
   ``--nbgrader-sample`` notebooks and its rate is taken from that sample (pass 0 for all);
3. ``seqgrade batch`` on all N with ``--workers`` = cores (one process, as a TA runs it);
4. the lower bound: the same checks on the same notebooks in one process, student code executed
   directly in it (no sandbox, no worker processes), notebooks already parsed;
5. prints submissions/s, the ratios, peak memory of the whole batch (the process tree's summed peak
   RSS), per-submission latency percentiles, and the time of one ``seqgrade grade`` from process start.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402
sys.path.insert(0, str(ROOT))


def tree_rss_mb(pid: int) -> float:
    """Memory of a process and all its descendants, now: the sum of their proportional set sizes (PSS),
    so pages that forked children share with their parent (torch, numpy) are counted once."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("Pss:")) * 1024
        except (OSError, StopIteration, ValueError):
            pass
        stack.extend(children.get(p, []))
    return total / 2**20


def run_measured(cmd, **kw) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall time and peak summed PSS of a command's process tree (sampled every 0.5 s)."""
    peak = [0.0]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], tree_rss_mb(proc.pid))
            stop.wait(0.5)  # smaps_rollup walks page tables: sampling often would slow the batch it measures

    t = threading.Thread(target=sample, daemon=True)
    start = time.perf_counter()
    t.start()
    out, err = proc.communicate()
    elapsed = time.perf_counter() - start
    stop.set()
    t.join()
    return elapsed, peak[0], subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def make_submissions(n: int, seed: int, dest: Path) -> list[Path]:
    from grader.release import release
    from grader.samples import make_samples

    solution = release("sequence_models", dest / "solution", solutions=True) / "sequence_models.ipynb"
    return make_samples(solution, dest / "submissions", count=n, seed=seed)


def bench_nbgrader(paths: list[Path], work: Path) -> dict:
    course = work / "course"
    shutil.copytree(ROOT / "assignments", course, ignore=shutil.ignore_patterns("__pycache__", "release", "submitted", "autograded", "gradebook.db", ".hypothesis"))
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    nbgrader = [sys.executable, "-m", "nbgrader"]
    subprocess.run([*nbgrader, "generate_assignment", "sequence_models", "--force"], cwd=course, env=env, check=True, capture_output=True)
    for p in paths:
        folder = course / "submitted" / p.stem / "sequence_models"
        folder.mkdir(parents=True)
        shutil.copy(p, folder / "sequence_models.ipynb")
    seconds, peak, proc = run_measured([*nbgrader, "autograde", "sequence_models"], cwd=course, env=env)
    return {"n": len(paths), "seconds": seconds, "peak_mb": peak, "rate": len(paths) / seconds, "rc": proc.returncode}


def bench_seqgrade(paths: list[Path], work: Path, workers: int) -> dict:
    sub = paths[0].parent
    seconds, peak, proc = run_measured([sys.executable, "-m", "grader.cli", "batch", str(sub), "--assignment", "sequence_models",
                                        "--out", str(work / "graded"), "--workers", str(workers)])
    if proc.returncode != 0:
        raise SystemExit(f"seqgrade batch failed: {proc.stderr[-2000:]}")
    return {"n": len(paths), "seconds": seconds, "peak_mb": peak, "rate": len(paths) / seconds}


def bench_lower_bound(paths: list[Path]) -> dict:
    """In this process: parse first (not timed), then run cells and checks with no isolation at all."""
    import torch

    torch.set_num_threads(1)
    from grader.backends.inprocess import InProcess
    from grader.errors import InvalidNotebook
    from grader.grading import grade_exercises
    from grader.notebook import load_submission
    from grader.registry import SEQUENCE_MODELS

    parsed = []
    for p in paths:
        try:
            parsed.append(load_submission(p))
        except InvalidNotebook:
            pass  # an invalid notebook costs the lower bound nothing
    latencies = []
    hostile = 0
    start = time.perf_counter()
    for sub in parsed:
        if any("while True" in src or "os._exit" in src for _, src in sub.cells):
            hostile += 1  # code that hangs or kills its process cannot run in-process: skipped, timed as free
            continue
        t = time.perf_counter()
        student, _ = InProcess.from_cells(sub.cells)
        grade_exercises(SEQUENCE_MODELS, student)
        latencies.append(time.perf_counter() - t)
    seconds = time.perf_counter() - start
    return {"n": len(paths), "seconds": seconds, "rate": len(paths) / seconds, "skipped_hostile": hostile}


def bench_single(path: Path) -> float:
    seconds, _, proc = run_measured([sys.executable, "-m", "grader.cli", "grade", str(path), "--json"])
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    return seconds


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--nbgrader-sample", type=int, default=20, help="notebooks nbgrader grades (0: all of them)")
    p.add_argument("--latency-sample", type=int, default=8, help="single-notebook `seqgrade grade` runs for latency")
    p.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="seqgrade-bench-"))
    try:
        paths = make_submissions(args.n, args.seed, work)
        print(f"# {describe()}")
        print(f"# {args.n} submissions (correct, partly wrong, hostile, invalid; seed {args.seed}), {args.workers} workers")
        seq = bench_seqgrade(paths, work, args.workers)
        print(f"seqgrade batch : {seq['n']:4d} in {seq['seconds']:7.1f} s = {seq['rate']:6.2f}/s, peak {seq['peak_mb']:.0f} MB", flush=True)
        low = bench_lower_bound(paths)
        print(f"lower bound    : {low['n']:4d} in {low['seconds']:7.1f} s = {low['rate']:6.2f}/s "
              f"({low['skipped_hostile']} hostile notebooks cannot run in-process; counted as free)", flush=True)
        step = max(1, len(paths) // args.nbgrader_sample) if args.nbgrader_sample else 1
        sample = paths[::step][: args.nbgrader_sample or None]
        nbg = bench_nbgrader(sample, work)
        print(f"nbgrader       : {nbg['n']:4d} in {nbg['seconds']:7.1f} s = {nbg['rate']:6.2f}/s (serial; "
              f"{'all' if len(sample) == len(paths) else 'every ' + str(step) + 'th notebook'}), peak {nbg['peak_mb']:.0f} MB", flush=True)
        singles = sorted(bench_single(paths[i]) for i in range(0, len(paths), max(1, len(paths) // args.latency_sample))[: args.latency_sample])
        p50 = statistics.median(singles)
        p95 = singles[min(len(singles) - 1, int(round(0.95 * (len(singles) - 1))))]
        print(f"seqgrade grade : one notebook from process start: p50 {p50:.2f} s, p95 {p95:.2f} s (n={len(singles)})")
        print("\n# ratios in this run")
        print(f"  seqgrade / nbgrader throughput:    {seq['rate'] / nbg['rate']:.1f}x   (target >= 10x)")
        print(f"  seqgrade / lower-bound throughput: {seq['rate'] / low['rate']:.2f}   (target >= 0.5, i.e. within 2x)")
        print(f"  peak memory of the batch:          {seq['peak_mb']:.0f} MB  (target <= 2048 MB with 2 workers)")
        print(f"  one `seqgrade grade`, p95:         {p95:.2f} s  (target < 5 s)")
        if args.json:
            Path(args.json).write_text(json.dumps({"seqgrade": seq, "lower_bound": low, "nbgrader": nbg,
                                                   "single_p50": p50, "single_p95": p95, "machine": describe()}, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
