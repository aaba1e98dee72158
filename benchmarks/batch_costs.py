"""A batch's fixed cost and its cost per further notebook, each against what it cannot go below (issue 38).

- Fixed cost: ``seqgrade batch`` of one correct notebook, from process start to exit, against a bare
  ``python -c "import torch, numpy"`` on the same machine in the same run (target: at most 1.5x).
- Marginal cost: what each further notebook adds to the whole-set batch, (batch of N - batch of 1) / (N - 1),
  in CPU seconds of every process (the cgroup) and in wall seconds, against the floor: the CPU seconds the
  grading process itself spends per notebook on its checks in a warm grader (in-process, every notebook of
  the set graded once after one warm-up). The jailed process's own CPU (running the student's cells and
  calls) is on top of that floor (target: at most 1.5x the floor).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from measure import measure

ASSIGNMENT = "sequence_models"
SEQGRADE = [sys.executable, "-m", "grader.cli"]


def batch_of_one(notebook: Path, work: Path, reps: int) -> list:
    runs = []
    for rep in range(reps):
        src = work / f"one-{rep}" / "in"
        src.mkdir(parents=True)
        (src / notebook.name).write_bytes(notebook.read_bytes())
        m = measure([*SEQGRADE, "batch", str(src), "--assignment", ASSIGNMENT, "--out", str(src.parent / "out")])
        if m.returncode != 0:
            raise SystemExit(f"seqgrade batch of one failed: {m.stderr[-2000:]}")
        runs.append(m)
    return runs


def grading_process_cpu(notebooks: list[Path]) -> float:
    """CPU seconds per notebook of the grading process alone, in a warm grader (the checks' floor)."""
    import torch

    torch.set_num_threads(1)
    from grader.grading import Grader

    with Grader() as grader:
        grader.grade(notebooks[0], ASSIGNMENT)
        start = time.process_time()
        for path in notebooks:
            grader.grade(path, ASSIGNMENT)
        return (time.process_time() - start) / len(notebooks)


def fixed_and_marginal(by_kind: dict[str, list[Path]], whole_runs: list[dict], reps: int, work: Path) -> dict:
    """Measure and print both costs; ``whole_runs``: the seqgrade batch runs of the whole set (same run)."""
    reps = max(reps, 1)
    one = batch_of_one(by_kind["correct"][0], work, reps)
    torch_runs = [measure([sys.executable, "-c", "import torch, numpy"]) for _ in range(reps)]
    one_wall, one_cpu = statistics.median(m.wall_s for m in one), statistics.median(m.cpu_s for m in one)
    bare = statistics.median(m.wall_s for m in torch_runs)
    n = whole_runs[0]["n"]
    everything = [p for paths in by_kind.values() for p in paths]
    floor = grading_process_cpu(everything)
    extra_cpu = (statistics.median(r["cpu_s"] for r in whole_runs) - one_cpu) / (n - 1)
    extra_wall = (statistics.median(r["wall_s"] for r in whole_runs) - one_wall) / (n - 1)
    print("\n# fixed and marginal cost (medians over the repetitions)")
    print(
        f"fixed: `seqgrade batch` of 1 notebook {one_wall:.2f} s wall ({one_cpu:.2f} CPU s), "
        f"`python -c 'import torch, numpy'` {bare:.2f} s: {one_wall / bare:.2f}x (target <= 1.5x)"
    )
    print(
        f"marginal: each further notebook of {n} adds {extra_cpu:.3f} CPU s ({extra_wall:.3f} s wall); the grading "
        f"process's own check CPU per notebook (warm, in-process) {floor:.3f} s: "
        f"{extra_cpu / floor:.2f}x (target <= 1.5x)",
        flush=True,
    )
    return {
        "one_wall_s": one_wall,
        "one_cpu_s": one_cpu,
        "torch_numpy_import_s": bare,
        "fixed_ratio": one_wall / bare,
        "marginal_cpu_s": extra_cpu,
        "marginal_wall_s": extra_wall,
        "floor_cpu_s": floor,
        "marginal_ratio": extra_cpu / floor,
    }
