"""What one call into the jail costs, with the grading thread and its jail on one CPU or left to the scheduler.

    .venv/bin/python benchmarks/round_trip.py              # 3 rounds of 2000 calls per placement
    .venv/bin/python benchmarks/round_trip.py --calls 500 --rounds 1

A real zygote and session (grader.sandbox): the jail defines ``f``, which returns its first argument, and
the grader calls it with four small float64 tensors, as a check does. Placements, alternating round by round
so that load on the machine falls on all alike:

- ``one CPU``: the grading thread and the jail on the same CPU (what seqgrade does, grader.sandbox.cpus);
- ``two CPUs``: the grading thread on one CPU, the jail on another;
- ``scheduler``: neither pinned.

Per call: the grading thread's CPU time (thread_time), the jail's (its processes' user and system time from
/proc, in clock ticks, so only the total over a round is meaningful) and the wall time. Prints the medians
over rounds and the ratios against ``one CPU``. Needs Linux, two CPUs and namespaces (or --isolation rlimits).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CELLS = [(0, "def f(*args):\n    return args[0]\n")]


def one_round(cpu_grader, cpu_jail, calls: int, args) -> tuple[float, float, float]:
    from grader.jail.limits import Limits
    from grader.sandbox import cpus, procfs
    from grader.sandbox.client import Session
    from grader.sandbox.jails import Zygote

    with Zygote(slot=16) as zygote:
        session = Session(zygote, CELLS, Limits(submission_timeout_s=600, call_timeout_s=60))
        try:
            with cpus.pinned(cpu_jail):  # a jail runs where the thread that starts it may run
                session.open()
            with cpus.pinned(cpu_grader):
                session.call("f", args)  # warms the function
                jail_before = procfs.tree_cpu_seconds(session.pgid)
                cpu, wall = time.thread_time(), time.perf_counter()
                for _ in range(calls):
                    session.call("f", args)
                cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
                jail = procfs.tree_cpu_seconds(session.pgid) - jail_before
        finally:
            session.close()
    return cpu / calls, jail / calls, wall / calls


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    import torch

    from grader.sandbox import cpus

    torch.set_num_threads(1)
    allowed = cpus.allowed()
    if len(allowed) < 2:
        print("needs two CPUs this process may use; found", allowed)
        return 1
    g = torch.Generator().manual_seed(0)
    tensors = [
        torch.randn(3, 4, 5, generator=g, dtype=torch.float64),
        torch.randn(3, 3, generator=g, dtype=torch.float64),
        torch.randn(5, 3, generator=g, dtype=torch.float64),
        torch.randn(3, generator=g, dtype=torch.float64),
    ]
    a, b = allowed[0], allowed[1]
    placements = {"one CPU": (a, a), "two CPUs": (a, b), "scheduler": (None, None)}
    got = {name: [] for name in placements}
    for _ in range(args.rounds):
        for name, (grader_cpu, jail_cpu) in placements.items():
            got[name].append(one_round(grader_cpu, jail_cpu, args.calls, tensors))
    print(f"# one call of f(4 tensors) into the jail: medians over {args.rounds} rounds of {args.calls} calls")
    print(f"{'placement':<10} | grader CPU us | jail CPU us | wall us | (grader + jail) / one CPU's")
    print("--- | --- | --- | --- | ---")
    base = None
    for name, rounds in got.items():
        grader_us, jail_us, wall_us = (1e6 * statistics.median(r[i] for r in rounds) for i in range(3))
        base = base or (grader_us + jail_us)
        print(
            f"{name:<10} | {grader_us:13.1f} | {jail_us:11.1f} | {wall_us:7.1f} | {(grader_us + jail_us) / base:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
