"""CPU time of every call into student code, on honest notebooks: where the per-call budgets come from.

    .venv/bin/python benchmarks/call_cpu.py                       # every assignment, about 1 minute
    .venv/bin/python benchmarks/call_cpu.py --only sequence_models

Grades each assignment's solution notebook and its alternative correct solutions
(tests/corpus/courses/<assignment>/alternative) twice, with budgets far above the defaults:

- through the sandbox, recording for every call the checks make the user CPU time the jail's processes
  spent on it, read from /proc outside the jail as the grader does (resolution: one clock tick, 10 ms);
- in this process (backend "inprocess", torch on one thread as in the jail), recording the CPU time of
  this thread inside each call (time.thread_time, nanoseconds; user and system time together, so an
  upper bound of the user time the grader counts), less the time spent serving stand-in calls, after a
  first in-process grade of the same notebook that is not recorded (the jail's zygote has warmed up too).

Prints the largest of each per function, split into ordinary calls and the calls whose memory is
measured, next to the budget that applies (grader.jail.limits.Limits.call_budget with the
exercise's declared budget) and the ratio of the budget to the largest in-process measurement (the
sandbox's column is coarse: a call of 0.1 ms registers 10 ms when a tick falls inside it).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402

sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    import statistics
    import time

    import torch

    from grader.assignments.registry import ASSIGNMENTS
    from grader.course.release import release
    from grader.grading import Grader
    from grader.jail.limits import Limits
    from grader.sandbox import client, inprocess, procfs
    from tests.corpus import courses

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", default=list(ASSIGNMENTS), choices=list(ASSIGNMENTS))
    args = p.parse_args(argv)

    used: dict[tuple[str, str, bool], list[float]] = defaultdict(list)  # (assignment, function, large) -> CPU s
    current = [""]
    original = client.Session._request

    def timed(self, request, values, name, stand_ins=None, log=None, watch=None):
        if self.sock is None:
            self._start()
        before = procfs.tree_cpu_seconds(self.pgid) if self.pgid else None
        try:
            return original(self, request, values, name, stand_ins, log, watch)
        finally:
            if before is not None and self.pgid and request.get("op") == "call":
                used[(current[0], name, watch is not None)].append(procfs.tree_cpu_seconds(self.pgid) - before)

    client.Session._request = timed

    precise: dict[tuple[str, str, bool], list[float]] = defaultdict(list)
    serving = [0.0]  # thread CPU spent answering stand-in calls inside the current call
    original_handle, original_serve = inprocess.invoke.handle, inprocess.serve_helper

    def handle(ns, request, values, ask=None):
        serving[0], start = 0.0, time.thread_time()
        try:
            return original_handle(ns, request, values, ask)
        finally:
            if request.get("op") == "call" and recording[0]:
                precise[(current[0], str(request.get("name")), bool(measuring[0]))].append(
                    time.thread_time() - start - serving[0]
                )

    def serve(*a, **k):
        start = time.thread_time()
        try:
            return original_serve(*a, **k)
        finally:
            serving[0] += time.thread_time() - start

    measuring, recording = [False], [True]
    original_call = inprocess.InProcess.call

    def call(self, name, args, **options):
        measuring[0] = options.get("measure_memory", False)
        return original_call(self, name, args, **options)

    inprocess.invoke.handle, inprocess.serve_helper, inprocess.InProcess.call = handle, serve, call
    torch.set_num_threads(1)
    generous = Limits(call_cpu_s=30, large_call_cpu_s=30, call_timeout_s=60)
    print(f"# {describe()}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with Grader(generous) as grader, Grader(generous, backend="inprocess") as in_process:
            for assignment in args.only:
                solution = release(assignment, work / "solution" / assignment, solutions=True) / f"{assignment}.ipynb"
                made = courses.build(assignment, solution, work / assignment)
                notebooks = [("solution", solution)] + [
                    (s, work / assignment / f"{s}.ipynb") for s, e in made.items() if e.kind == "alternative"
                ]
                current[0] = assignment
                for student, path in notebooks:
                    recording[0] = False  # first-time costs in this process (lazy imports, autograd set-up)
                    in_process.grade(path, assignment)  # are not the call's: the zygote has warmed up
                    recording[0] = True
                    for one in (grader, in_process):
                        result = one.grade(path, assignment)
                        if result.score != sum(e.max_score for e in result.exercises if not e.manual):
                            print(f"  note: {assignment} {student} scored {result.score:g} ({one.backend})")
                print(f"{assignment}: {len(notebooks)} honest notebooks graded", flush=True)
    d = Limits()
    print(
        "\n| assignment | function | calls | largest CPU per call, sandbox (10 ms ticks) | largest CPU per call, "
        "in-process | median, in-process | budget | budget / largest |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for key in sorted(set(used) | set(precise), key=lambda k: -max(used.get(k, [0]) + precise.get(k, [0]))):
        assignment, name, large = key
        declared = {e.id: e.call_cpu_s for e in ASSIGNMENTS[assignment].exercises}.get(name)
        budget = d.large_call_cpu_s if large else d.call_budget(declared)
        top = max(precise.get(key, [0]))  # the tick column can show 10 ms for a call of 0.1 ms
        ratio = f"{budget / top:.0f}x" if top > 0 else "-"
        print(
            f"| {assignment} | {name}{' (memory measured)' if large else ''} | "
            f"{len(precise.get(key, used.get(key, [])))} | "
            f"{max(used.get(key, [0])) * 1000:.0f} ms | {max(precise.get(key, [0])) * 1000:.1f} ms | "
            f"{statistics.median(precise.get(key, [0])) * 1000:.2f} ms | {budget:g} s | {ratio} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
