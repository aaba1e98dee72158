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

The steps live beside this script: the submissions in submissions.py (1), the two tools' runs and what is
checked of them in tool_comparison.py, seqgrade_runs.py and nbgrader_runs.py (2-4), the costs in
batch_costs.py (5) and the latency in latency.py (6).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch_costs import fixed_and_marginal  # noqa: E402
from latency import measure_latency  # noqa: E402
from machine import describe  # noqa: E402
from nbgrader_runs import nbgrader_course  # noqa: E402
from submissions import KINDS  # noqa: E402
from tool_comparison import TARGETS, compare_tools  # noqa: E402

sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--n",
        type=int,
        nargs="+",
        default=[32, 300],
        help="class sizes, each compared with nbgrader (a multiple of 4 keeps the kinds equal)",
    )
    p.add_argument("--reps", type=int, default=3, help="repetitions of every measurement")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument(
        "--latency-sample", type=int, default=8, help="single `seqgrade grade` runs for the latency percentiles"
    )
    p.add_argument(
        "--whole-only",
        action="store_true",
        help="measure only the whole set (one run of each tool per repetition): no split by kind",
    )
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
        latency = measure_latency(by_kind, everything, args, work, problems)
        print(
            "\n# end to end against nbgrader, by class size: "
            + "; ".join(
                f"{size} notebooks {ratio:.1f}x (target >= {TARGETS.get(size, 10)}x)" for size, ratio in ratios.items()
            )
        )
        if args.json:
            Path(args.json).write_text(
                json.dumps(
                    {
                        "machine": describe(),
                        "runs": runs,
                        "ratios": ratios,
                        "costs": costs,
                        **latency,
                        "problems": problems,
                    },
                    indent=2,
                )
                + "\n"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
