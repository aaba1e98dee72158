"""Grading throughput: seqgrade batch against nbgrader autograde, end to end, in one run.

    .venv/bin/python benchmarks/grading.py                 # N = 32 and 300, 3 repetitions (hours: nbgrader)
    .venv/bin/python benchmarks/grading.py --n 4 --reps 1 --whole-only --latency-sample 1  # a quick look

For each class size N of ``--n`` (each compared with nbgrader; the targets of issue 38 are 20x at 32
notebooks and 30x at 300):

1. N byte-distinct ``sequence_models`` submissions from ``--seed``, a quarter each: correct, partly wrong
   (3 wrong exercises), hostile (patched comparisons, always-equal objects, ``os._exit``, an infinite
   loop, a network call, reading the reference) and invalid (a truncated upload). No two files are equal,
   so neither tool can reuse anything between students.
2. Each repetition runs, in alternating order so that machine load falls on both alike:
   - ``seqgrade batch`` on all N, then on the N without the hostile ones, then on each kind alone, with
     ``--workers`` (default: every core) into a fresh output folder (gradebook, feedback pages, summary);
   - nbgrader on each kind alone and on no submission at all: ``nbgrader autograde`` then ``nbgrader
     generate_feedback`` in a fresh copy of a course made from ``assignments/`` whose release was
     generated beforehand (its hidden cells call seqgrade's checks in the student's kernel, as the
     assignment ships), serial as nbgrader is. Its figure for a set of kinds is the sum of their runs less
     the start-ups counted more than once (the empty run of the same repetition), so every notebook is
     graded by nbgrader, once per repetition, and each figure holds one start-up as seqgrade's do.
   Every command is measured from process start to exit: wall time and the CPU seconds of every process
   it starts (a cpuacct cgroup of its own where this runs as root; see benchmarks/measure.py).
3. Reports medians with the range over repetitions: notebooks per second, CPU seconds per notebook, the
   seqgrade/nbgrader ratio overall, per core (nbgrader uses one), per kind and without the hostile kind.
4. Checks in the same run that two seqgrade runs wrote byte-identical results and grades, and that
   seqgrade and nbgrader gave every non-hostile notebook the same automatic points.
5. The fixed and marginal costs (benchmarks/batch_costs.py), on the first size: a batch of one notebook
   against a bare ``import torch, numpy``, and what each further notebook adds against the grading
   process's own check CPU per notebook in a warm grader.
6. Latency: ``seqgrade grade`` of single notebooks from process start (p50, p95), cold and with a grading
   server running (``seqgrade serve``; the two must print the same bytes), and of a notebook whose every
   function hangs, from process start, through the server and inside a warm grader (what it adds to a batch).

The store of drawn examples (grader/checking/drawn.py) starts empty in a folder of this run: the first
seqgrade batch draws the examples and stores them, later commands read them, as on a course machine
after its first grading. Single-notebook latency is measured with the stored examples and also, a few
times, with an empty store (the first grade after seqgrade was installed or changed).
"""
from __future__ import annotations

import argparse
import csv
import filecmp
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch_costs import fixed_and_marginal  # noqa: E402
from machine import describe  # noqa: E402
from measure import Measured, measure  # noqa: E402
from nbgrader_runs import nbgrader_course, nbgrader_scores, run_nbgrader  # noqa: E402

sys.path.insert(0, str(ROOT))

ASSIGNMENT = "sequence_models"
TARGETS = {32: 20, 300: 30}  # seqgrade / nbgrader end to end, by class size (issue 38)
KINDS = ("correct", "partly_wrong", "hostile", "invalid")
SEQGRADE = [sys.executable, "-m", "grader.cli"]
NBGRADER = [sys.executable, "-m", "nbgrader"]


# --- inputs ---------------------------------------------------------------------------------------------
def make_submissions(n: int, seed: int, work: Path) -> dict[str, list[Path]]:
    """N byte-distinct notebooks, by kind (the kinds cycle as in grader.course.samples.make_samples)."""
    from grader.course.release import release
    from grader.course.samples import make_samples

    solution = release(ASSIGNMENT, work / "solution", solutions=True) / f"{ASSIGNMENT}.ipynb"
    made = make_samples(solution, work / "made", count=n, seed=seed)
    rng = random.Random(seed)
    out = work / "all"
    out.mkdir()
    by_kind: dict[str, list[Path]] = {k: [] for k in KINDS}
    for i, path in enumerate(made):
        kind = KINDS[i % 4]
        dest = out / path.name
        if kind == "invalid":  # the same truncated upload, cut at a length of its own
            text = solution.read_text(encoding="utf-8")
            dest.write_text(text[: rng.randrange(len(text) // 4, len(text) // 2)] + f"\n{i}", encoding="utf-8")
        else:  # a metadata field of its own: the notebook runs and grades exactly as before
            nb = json.loads(path.read_text(encoding="utf-8"))
            nb.setdefault("metadata", {})["benchmark_copy"] = i
            dest.write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")
        by_kind[kind].append(dest)
    files = [p for paths in by_kind.values() for p in paths]
    if len({p.read_bytes() for p in files}) != len(files):
        raise SystemExit("two submissions are byte-identical")
    return by_kind


def folder_of(paths: list[Path], dest: Path) -> Path:
    dest.mkdir(parents=True)
    for p in paths:
        shutil.copy(p, dest / p.name)
    return dest


# --- the two tools --------------------------------------------------------------------------------------
def run_seqgrade(paths: list[Path], work: Path, workers: int, *, sample_memory: bool = False) -> tuple[Measured, Path]:
    src = folder_of(paths, work / "in")
    out = work / "out"
    m = measure([*SEQGRADE, "batch", str(src), "--assignment", ASSIGNMENT, "--out", str(out), "--workers", str(workers)],
                sample_memory=sample_memory)
    if m.returncode != 0:
        raise SystemExit(f"seqgrade batch failed ({m.returncode}): {m.stderr[-3000:]}")
    return m, out


def seqgrade_scores(out: Path) -> dict[str, float]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {row["student_id"]: float(row["total"]) for row in csv.DictReader(f)}


def compare_points(theirs: dict[str, float], seq_outputs: list[Path], by_kind: dict[str, list[Path]]) -> list[str]:
    """Where seqgrade's first run and nbgrader disagree on a correct or partly wrong notebook's points
    (hostile notebooks fool or stop nbgrader, and it cannot read the invalid ones at all)."""
    if not seq_outputs:
        return []
    ours = seqgrade_scores(seq_outputs[0])
    found = []
    for kind in ("correct", "partly_wrong"):
        for path in by_kind.get(kind, []):
            s = path.stem
            if s not in theirs:
                found.append(f"{s} ({kind}): nbgrader recorded no score")
            elif abs(theirs[s] - ours.get(s, float("nan"))) > 1e-6 or s not in ours:
                found.append(f"{s} ({kind}): seqgrade {ours.get(s)}, nbgrader {theirs[s]:g}")
    return found


def same_outputs(a: Path, b: Path) -> list[str]:
    """Files that differ between two batch outputs (results, grades.csv, feedback pages)."""
    differ = []
    for name in ("grades.csv",):
        if not filecmp.cmp(a / name, b / name, shallow=False):
            differ.append(name)
    for sub in ("results", "feedback"):
        names = sorted(p.name for p in (a / sub).iterdir())
        if names != sorted(p.name for p in (b / sub).iterdir()):
            differ.append(f"{sub}/ (different files)")
            continue
        differ += [f"{sub}/{n}" for n in names if not filecmp.cmp(a / sub / n, b / sub / n, shallow=False)]
    return differ


# --- latency --------------------------------------------------------------------------------------------
def hang_everywhere(solution_like: Path, dest: Path) -> Path:
    """A notebook whose every function loops forever when called (its last cell redefines them)."""
    from grader.assignments.registry import get_assignment

    nb = json.loads(solution_like.read_text(encoding="utf-8"))
    funcs = [e.id for e in get_assignment(ASSIGNMENT).exercises if e.kind == "function"]
    source = "\n".join(f"def {f}(*args, **kwargs):\n    while True:\n        pass\n" for f in funcs)
    nb["cells"].append({"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None,
                        "id": "hang-everywhere"})
    dest.write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")
    return dest


def grade_once(path: Path, store: Path | None = None) -> Measured:
    """One ``seqgrade grade`` of ``path``; ``store``: another folder for the stored examples (an empty one
    measures a first grade)."""
    env = {**os.environ, "SEQGRADE_CACHE_DIR": str(store)} if store is not None else None
    m = measure([*SEQGRADE, "grade", str(path), "--json", "--assignment", ASSIGNMENT], env=env)
    if m.returncode != 0:
        raise SystemExit(f"seqgrade grade failed: {m.stderr[-2000:]}")
    return m


def warm_grading_seconds(path: Path, repeats: int) -> list[float]:
    """Wall seconds of grading ``path`` in a grader that has already graded it once (a batch worker's case)."""
    import torch

    torch.set_num_threads(1)
    from grader.grading import Grader

    times = []
    with Grader() as grader:
        grader.grade(path, ASSIGNMENT)
        for _ in range(repeats):
            start = time.perf_counter()
            grader.grade(path, ASSIGNMENT)
            times.append(time.perf_counter() - start)
    return times


# --- report ---------------------------------------------------------------------------------------------
def percentile95(ordered: list[float]) -> float:
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def med(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"


def compare_tools(n: int, args, work: Path, template: Path, runs: list[dict], problems: list[str]):
    """seqgrade batch against nbgrader on n byte-distinct notebooks (steps 1-4 of the docstring); returns
    (the end-to-end ratio, the notebooks by kind, the seqgrade runs of the whole set)."""
    (work / f"n{n}").mkdir()
    by_kind = make_submissions(n, args.seed, work / f"n{n}")
    everything = [p for k in KINDS for p in by_kind[k]]
    not_hostile = [p for k in KINDS if k != "hostile" for p in by_kind[k]]
    print(f"# {len(everything)} byte-distinct submissions ({', '.join(f'{len(v)} {k}' for k, v in by_kind.items())}; "
          f"seed {args.seed}), seqgrade --workers {args.workers}, {args.reps} repetitions", flush=True)
    seq_outputs = []
    for rep in range(args.reps):
        tools = ("seqgrade", "nbgrader") if rep % 2 == 0 else ("nbgrader", "seqgrade")
        for tool in tools:
            if tool == "seqgrade":
                sets = (("all", everything),) if args.whole_only else (("all", everything), ("not_hostile", not_hostile), *by_kind.items())
                for label, paths in sets:
                    m, out = run_seqgrade(paths, work / f"n{n}-seq-{rep}-{label}", args.workers, sample_memory=label == "all")
                    runs.append({"size": n, "tool": "seqgrade", "rep": rep, "set": label, "n": len(paths), **vars_of(m)})
                    print(f"rep {rep} seqgrade {label:12s} {len(paths):4d} notebooks: {m.wall_s:7.1f} s wall, "
                          f"{m.cpu_s:7.1f} CPU s ({m.cpu_source})", flush=True)
                    if label == "all":
                        seq_outputs.append(out)
            elif args.whole_only:
                grade, feedback, course = run_nbgrader(everything, template, work / f"n{n}-nbg-{rep}-all")
                runs.append({"size": n, "tool": "nbgrader", "rep": rep, "set": "all", "n": len(everything),
                             **{k: getattr(grade, k) + getattr(feedback, k) for k in ("wall_s", "cpu_s")}})
                print(f"rep {rep} nbgrader {'all':12s} {len(everything):4d} notebooks: {grade.wall_s + feedback.wall_s:7.1f} s wall, "
                      f"{grade.cpu_s + feedback.cpu_s:7.1f} CPU s", flush=True)
                if rep == 0:
                    problems += compare_points(nbgrader_scores(course), seq_outputs, by_kind)
            else:
                grade, feedback, _ = run_nbgrader([], template, work / f"n{n}-nbg-{rep}-empty")
                runs.append({"size": n, "tool": "nbgrader", "rep": rep, "set": "empty", "n": 0,
                             **{k: getattr(grade, k) + getattr(feedback, k) for k in ("wall_s", "cpu_s")}})
                print(f"rep {rep} nbgrader {'no notebook':12s}    0 notebooks: {grade.wall_s + feedback.wall_s:7.1f} s wall, "
                      f"{grade.cpu_s + feedback.cpu_s:7.1f} CPU s (its start-up)", flush=True)
                for kind, paths in by_kind.items():
                    grade, feedback, course = run_nbgrader(paths, template, work / f"n{n}-nbg-{rep}-{kind}")
                    runs.append({"size": n, "tool": "nbgrader", "rep": rep, "set": kind, "n": len(paths),
                                 **{k: getattr(grade, k) + getattr(feedback, k) for k in ("wall_s", "cpu_s")},
                                 "autograde_wall_s": grade.wall_s, "feedback_wall_s": feedback.wall_s,
                                 "returncode": grade.returncode or feedback.returncode})
                    print(f"rep {rep} nbgrader {kind:12s} {len(paths):4d} notebooks: {grade.wall_s + feedback.wall_s:7.1f} s wall "
                          f"(autograde {grade.wall_s:.1f}, feedback {feedback.wall_s:.1f}), "
                          f"{grade.cpu_s + feedback.cpu_s:7.1f} CPU s", flush=True)
                    if rep == 0:
                        problems += compare_points(nbgrader_scores(course), seq_outputs, {kind: paths})
    if len(seq_outputs) >= 2:
        differ = same_outputs(seq_outputs[0], seq_outputs[1])
        problems += [f"seqgrade runs 1 and 2 differ in {d}" for d in differ]

    def rows(tool, label):
        return [r for r in runs if r["tool"] == tool and r["set"] == label and r.get("size") == n]

    def nbg_total(kinds):  # nbgrader's figure for a set of kinds, per repetition: see the docstring
        per_rep = {}
        for r in runs:
            if r["tool"] == "nbgrader" and r["set"] in kinds and r.get("size") == n:
                t = per_rep.setdefault(r["rep"], [0, 0.0, 0.0])
                t[0] += r["n"]
                t[1] += r["wall_s"]
                t[2] += r["cpu_s"]
        for r in runs:
            if r["tool"] == "nbgrader" and r["set"] == "empty" and r.get("size") == n:
                t = per_rep[r["rep"]]
                t[1] -= (len(kinds) - 1) * r["wall_s"]
                t[2] -= (len(kinds) - 1) * r["cpu_s"]
        return list(per_rep.values())

    def line(name, seq_rows, nbg_rows):
        s_rate = [r["n"] / r["wall_s"] for r in seq_rows]
        n_rate = [n / w for n, w, _ in nbg_rows]
        s_cpu = [r["cpu_s"] / r["n"] for r in seq_rows]
        n_cpu = [c / n for n, _, c in nbg_rows]
        ratio = [a / b for a, b in zip(s_rate, n_rate)]
        cpu_ratio = [b / a for a, b in zip(s_cpu, n_cpu)]
        print(f"| {name} | {med(s_rate)} | {med(n_rate)} | **{statistics.median(ratio):.1f}x** "
              f"[{min(ratio):.1f}-{max(ratio):.1f}] | {statistics.median(ratio) / args.workers:.1f}x | "
              f"{med(s_cpu)} | {med(n_cpu)} | {statistics.median(cpu_ratio):.1f}x |")
        return statistics.median(ratio)

    print("\n# medians over the repetitions [range]; notebooks per second of wall time, CPU seconds per notebook")
    print("| set | seqgrade nb/s | nbgrader nb/s | ratio | ratio per core | seqgrade CPU s/nb | nbgrader CPU s/nb | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|")
    if args.whole_only:
        overall = line(f"all {len(everything)}", rows("seqgrade", "all"),
                       [(r["n"], r["wall_s"], r["cpu_s"]) for r in rows("nbgrader", "all")])
    else:
        overall = line(f"all {len(everything)}", rows("seqgrade", "all"), nbg_total(KINDS))
    if not args.whole_only:
        line(f"without hostile ({len(not_hostile)})", rows("seqgrade", "not_hostile"), nbg_total(("correct", "partly_wrong", "invalid")))
        for kind in KINDS:
            line(kind, rows("seqgrade", kind), nbg_total((kind,)))
    peak = max(r["peak_mb"] for r in rows("seqgrade", "all"))
    print(f"\nseqgrade / nbgrader end to end, all {len(everything)}: {overall:.1f}x (target >= {TARGETS.get(n, 10)}x)")
    print(f"peak memory of the whole batch (PSS): {peak:.0f} MB")
    print("\n# checks in this run", flush=True)
    said = list(problems) or ["seqgrade and nbgrader agree on every correct and partly wrong notebook's automatic points"]
    if not problems:
        said.append("seqgrade runs 1 and 2 wrote byte-identical results, feedback pages and grades.csv"
                    if len(seq_outputs) >= 2 else "one seqgrade run only: byte-identity not checked (--reps 2 or more)")
    print("  " + "\n  ".join(said), flush=True)
    return overall, by_kind, rows("seqgrade", "all")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+", default=[32, 300],
                   help="class sizes, each compared with nbgrader (a multiple of 4 keeps the kinds equal)")
    p.add_argument("--reps", type=int, default=3, help="repetitions of every measurement")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--latency-sample", type=int, default=8, help="single `seqgrade grade` runs for the latency percentiles")
    p.add_argument("--whole-only", action="store_true",
                   help="measure only the whole set (one run of each tool per repetition): no split by kind")
    p.add_argument("--json", metavar="FILE", help="also write every measurement as JSON")
    args = p.parse_args(argv)
    if min(args.n) < 4:
        p.error("--n must be at least 4 (one notebook of each kind)")
    work = Path(tempfile.mkdtemp(prefix="seqgrade-bench-"))
    os.environ["SEQGRADE_CACHE_DIR"] = str(work / "drawn-examples")  # empty: the first batch fills it
    os.environ["SEQGRADE_SERVER"] = str(work / "server" / "grade.sock")  # no server there until step 5 starts one
    runs: list[dict] = []
    problems: list[str] = []
    try:
        template = nbgrader_course(work / "template")
        print(f"# {describe()}")
        ratios, first = {}, None
        for n in args.n:
            ratios[n], by_kind, seq_all = compare_tools(n, args, work, template, runs, problems)
            if first is None:
                first = (n, by_kind, seq_all)
        n, by_kind, seq_all = first
        everything = [p for k in KINDS for p in by_kind[k]]
        costs = fixed_and_marginal(by_kind, seq_all, args.reps, work)
        # Latency of single notebooks, and of one that hangs in every function.
        step = max(1, len(everything) // args.latency_sample)
        sample = [everything[i] for i in range(0, len(everything), step)[: args.latency_sample]]
        cold_runs = [grade_once(path) for path in sample]
        singles = sorted(m.wall_s for m in cold_runs)
        first_grade = [grade_once(by_kind["correct"][i % len(by_kind["correct"])], work / f"empty-store-{i}").wall_s
                 for i in range(max(args.reps, 1))]
        hang = hang_everywhere(by_kind["correct"][0], work / "hang_everywhere.ipynb")
        hang_cold = [grade_once(hang).wall_s for _ in range(max(args.reps, 1))]
        hang_warm = warm_grading_seconds(hang, max(args.reps, 1))

        # The same notebooks through a grading server (`seqgrade serve`): same bytes out, less start.
        server_start = measure([*SEQGRADE, "serve", "--detach", "--idle-exit", "600"])
        if server_start.returncode != 0:
            raise SystemExit(f"seqgrade serve failed: {server_start.stderr[-2000:]}")
        try:
            served_runs = [grade_once(path) for path in sample]
            hang_served = [grade_once(hang).wall_s for _ in range(max(args.reps, 1))]
            from grader.server import status

            graded = (status() or {}).get("graded")
        finally:
            measure([*SEQGRADE, "serve", "--stop"])
        served = sorted(m.wall_s for m in served_runs)
        server_problems = [f"{path.name}: the server's result differs from a cold run's"
                           for path, cold, warm in zip(sample, cold_runs, served_runs) if warm.stdout != cold.stdout]
        if graded != len(served_runs) + len(hang_served):
            server_problems.append(f"the server graded {graded} notebooks, not {len(served_runs) + len(hang_served)}: "
                                   f"some `seqgrade grade` runs did not use it")
        problems += server_problems
        torch_alone = [measure([sys.executable, "-c", "import torch"]).wall_s for _ in range(3)]
        p50 = statistics.median(singles)
        p95 = percentile95(singles)
        print(f"one `seqgrade grade` from process start: p50 {p50:.2f} s, p95 {p95:.2f} s (n={len(singles)}; target < 2 s); "
              f"with an empty store of drawn examples {med(first_grade)} s; for scale, `python -c 'import torch'` "
              f"alone {med(torch_alone)} s on this machine now")
        print(f"with a grading server running (`seqgrade serve`, ready in {server_start.wall_s:.1f} s): p50 "
              f"{statistics.median(served):.2f} s, p95 {percentile95(served):.2f} s; "
              f"{'; '.join(server_problems) or 'every result the same bytes as the cold run of the same notebook'}")
        print(f"a notebook that hangs in every function: `seqgrade grade` {med(hang_cold)} s, with a server "
              f"{med(hang_served)} s; in a warm grader {med(hang_warm)} s (target < 1.5 s)")
        print("\n# end to end against nbgrader, by class size: " + "; ".join(
            f"{size} notebooks {ratio:.1f}x (target >= {TARGETS.get(size, 10)}x)" for size, ratio in ratios.items()))
        if args.json:
            Path(args.json).write_text(json.dumps({"machine": describe(), "runs": runs, "ratios": ratios, "costs": costs,
                                                   "singles": singles, "first_grade": first_grade, "torch_import": torch_alone,
                                                   "served": served, "server_start": server_start.wall_s,
                                                   "hang_cold": hang_cold, "hang_warm": hang_warm, "hang_served": hang_served,
                                                   "problems": problems}, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


def vars_of(m: Measured) -> dict:
    return {"wall_s": m.wall_s, "cpu_s": m.cpu_s, "cpu_source": m.cpu_source, "peak_mb": m.peak_mb}


if __name__ == "__main__":
    sys.exit(main())
