"""CPU cost of grading one notebook of each assignment, as a ratio to one sequence_models notebook.

    .venv/bin/python benchmarks/assignments.py            # 5 rounds, every assignment
    .venv/bin/python benchmarks/assignments.py --rounds 3 --only recursive_attention

Each assignment's solution notebook (full marks, so every check runs every example) is graded in
rounds, the assignments interleaved within a round so that machine load hits them alike:

1. **checks**: CPU seconds of ``Grader(backend="inprocess").grade`` in this process, torch on one thread
   as in the workers (the checks, the reference and the student's code, without the sandbox), after one
   warm-up grade per assignment (which draws the examples that later grades replay);
2. **end to end**: CPU seconds of a whole ``seqgrade grade`` process through the sandbox (start-up,
   imports, the jail and every call across it), from a cpuacct cgroup of its own where this runs as
   root (else from rusage, which misses processes nobody waited for);
3. **sandboxed grading**: the end-to-end figure minus that of ``seqgrade grade`` on a notebook that
   cannot be read (the same start-up, zygote included, and no grading), examples drawn included;
4. **in a batch**: what one more notebook costs a TA's batch: the CPU seconds of ``seqgrade batch
   --workers 1`` on 2k byte-distinct copies of the solution minus those on k copies, over k (start-up,
   the gradebook and drawing the examples cancel out).

Prints the medians and each assignment's ratio to sequence_models measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402
from measure import cpu_seconds  # noqa: E402

sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--copies", type=int, default=3, help="k of the batch measure (batches of k and 2k)")
    parser.add_argument("--only", nargs="*", default=None, help="assignments besides sequence_models (default: all)")
    args = parser.parse_args(argv)

    import torch

    from grader.assignments.registry import ASSIGNMENTS
    from grader.course.release import release
    from grader.grading import Grader

    torch.set_num_threads(1)  # as in the batch workers and the sandbox: tiny ops on two threads mostly spin

    names = [
        "sequence_models",
        *[a for a in ASSIGNMENTS if a != "sequence_models" and (args.only is None or a in args.only)],
    ]
    work = Path(tempfile.mkdtemp(prefix="seqgrade-bench-"))
    solutions = {a: release(a, work, solutions=True) / ASSIGNMENTS[a].notebook for a in names}
    print(describe())
    checks = {a: [] for a in names}
    end_to_end = {a: [] for a in names}
    startup = []
    batch = {a: [] for a in names}

    def batch_cpu(assignment, copies) -> float:
        folder = work / f"batch-{assignment}-{copies}"
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "in").mkdir(parents=True)
        nb = json.loads(solutions[assignment].read_text())
        for i in range(copies):  # byte-distinct copies: a batch grades identical files only once
            nb["metadata"]["copy"] = i
            (folder / "in" / f"student{i:02d}.ipynb").write_text(json.dumps(nb))
        return cpu_seconds(
            [
                str(ROOT / ".venv" / "bin" / "seqgrade"),
                "batch",
                str(folder / "in"),
                "--assignment",
                assignment,
                "--out",
                str(folder / "out"),
                "--workers",
                "1",
            ]
        )

    broken = work / "broken.ipynb"
    broken.write_text("{ not json")

    def seqgrade_cpu(path, assignment) -> float:
        return cpu_seconds(
            [str(ROOT / ".venv" / "bin" / "seqgrade"), "grade", str(path), "--json", "--assignment", assignment]
        )

    with Grader(backend="inprocess") as grader:
        for a in names:  # warm-up: draws every check's examples once
            result = grader.grade(solutions[a])
            auto = sum(e.points for e in ASSIGNMENTS[a].exercises if e.kind != "manual")
            if result.score != auto:
                print(f"warning: {a}'s solution scored {result.score} of {auto}")
        for _ in range(args.rounds):
            for a in names:
                start = time.process_time()
                grader.grade(solutions[a])
                checks[a].append(time.process_time() - start)
                end_to_end[a].append(seqgrade_cpu(solutions[a], a))
                batch[a].append(batch_cpu(a, 2 * args.copies) - batch_cpu(a, args.copies))
            startup.append(seqgrade_cpu(broken, "sequence_models"))
    base = statistics.median(startup)
    base_checks, base_e2e = (
        statistics.median(checks["sequence_models"]),
        statistics.median(end_to_end["sequence_models"]),
    )
    print(f"start-up of seqgrade grade (an unreadable notebook): {base:.2f} CPU s")
    print(
        f"{'assignment':22} {'checks CPU s':>13} {'ratio':>6} {'end-to-end CPU s':>17} {'ratio':>6} "
        f"{'sandboxed grading CPU s':>24} {'ratio':>6} {'in a batch CPU s':>17} {'ratio':>6}   "
        f"({args.rounds} rounds, medians)"
    )
    base_batch = statistics.median(batch["sequence_models"]) / args.copies
    for a in names:
        c, e = statistics.median(checks[a]), statistics.median(end_to_end[a])
        b = statistics.median(batch[a]) / args.copies
        print(
            f"{a:22} {c:13.2f} {c / base_checks:6.2f} {e:17.2f} {e / base_e2e:6.2f} {e - base:24.2f} "
            f"{(e - base) / (base_e2e - base):6.2f} {b:17.2f} {b / base_batch:6.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
