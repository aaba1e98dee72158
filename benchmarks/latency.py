"""Latency (step 6 of benchmarks/grading.py): ``seqgrade grade`` of single notebooks from process start, cold,
with an empty store of drawn examples and through a grading server, and of a notebook whose every function
hangs, from process start, through the server and inside a warm grader."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

from measure import Measured, measure
from seqgrade_runs import SEQGRADE
from spread import med, percentile95
from submissions import ASSIGNMENT


def hang_everywhere(solution_like: Path, dest: Path) -> Path:
    """A notebook whose every function loops forever when called (its last cell redefines them)."""
    from grader.assignments.registry import get_assignment

    nb = json.loads(solution_like.read_text(encoding="utf-8"))
    funcs = [e.id for e in get_assignment(ASSIGNMENT).exercises if e.kind == "function"]
    source = "\n".join(f"def {f}(*args, **kwargs):\n    while True:\n        pass\n" for f in funcs)
    nb["cells"].append(
        {
            "cell_type": "code",
            "metadata": {},
            "source": source,
            "outputs": [],
            "execution_count": None,
            "id": "hang-everywhere",
        }
    )
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


def measure_latency(by_kind: dict[str, list[Path]], everything: list[Path], args, work: Path, problems: list[str]):
    """Measure and print step 6 of the docstring of benchmarks/grading.py; add to ``problems`` where the server
    differs from cold runs; return the figures by name (for the JSON)."""
    # Latency of single notebooks, and of one that hangs in every function.
    step = max(1, len(everything) // args.latency_sample)
    sample = [everything[i] for i in range(0, len(everything), step)[: args.latency_sample]]
    cold_runs = [grade_once(path) for path in sample]
    singles = sorted(m.wall_s for m in cold_runs)
    first_grade = [
        grade_once(by_kind["correct"][i % len(by_kind["correct"])], work / f"empty-store-{i}").wall_s
        for i in range(max(args.reps, 1))
    ]
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
    server_problems = [
        f"{path.name}: the server's result differs from a cold run's"
        for path, cold, warm in zip(sample, cold_runs, served_runs)
        if warm.stdout != cold.stdout
    ]
    if graded != len(served_runs) + len(hang_served):
        server_problems.append(
            f"the server graded {graded} notebooks, not {len(served_runs) + len(hang_served)}: "
            f"some `seqgrade grade` runs did not use it"
        )
    problems += server_problems
    torch_alone = [measure([sys.executable, "-c", "import torch"]).wall_s for _ in range(3)]
    p50 = statistics.median(singles)
    p95 = percentile95(singles)
    print(
        f"one `seqgrade grade` from process start: p50 {p50:.2f} s, p95 {p95:.2f} s (n={len(singles)}; target < 2 s); "
        f"with an empty store of drawn examples {med(first_grade)} s; for scale, `python -c 'import torch'` "
        f"alone {med(torch_alone)} s on this machine now"
    )
    print(
        f"with a grading server running (`seqgrade serve`, ready in {server_start.wall_s:.1f} s): p50 "
        f"{statistics.median(served):.2f} s, p95 {percentile95(served):.2f} s; "
        f"{'; '.join(server_problems) or 'every result the same bytes as the cold run of the same notebook'}"
    )
    print(
        f"a notebook that hangs in every function: `seqgrade grade` {med(hang_cold)} s, with a server "
        f"{med(hang_served)} s; in a warm grader {med(hang_warm)} s (target < 1.5 s)"
    )
    return {
        "singles": singles,
        "first_grade": first_grade,
        "torch_import": torch_alone,
        "served": served,
        "server_start": server_start.wall_s,
        "hang_cold": hang_cold,
        "hang_warm": hang_warm,
        "hang_served": hang_served,
    }
