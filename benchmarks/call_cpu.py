"""CPU time of every call into student code, on honest notebooks: where the per-call budgets come from.

    .venv/bin/python benchmarks/call_cpu.py                       # every assignment, about 1 minute
    .venv/bin/python benchmarks/call_cpu.py --only sequence_models

Grades each assignment's solution notebook and its alternative correct solutions
(tests/corpus/courses/<assignment>/alternative) through the sandbox with budgets far above the
defaults, and records, for every call the checks make, the user CPU time the jail's processes spent
on it, read from /proc outside the jail as the grader does (resolution: one clock tick, 10 ms). Prints
the largest per function, split into ordinary calls and the calls whose memory is measured, next to the
budgets that apply to each (grader.sandbox.limits.Limits) and their ratio.
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
    from grader.grading import Grader
    from grader.registry import ASSIGNMENTS
    from grader.release import release
    from grader.sandbox import client, isolation
    from grader.sandbox.limits import Limits
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
        before = isolation.tree_cpu_seconds(self.pgid) if self.pgid else None
        try:
            return original(self, request, values, name, stand_ins, log, watch)
        finally:
            if before is not None and self.pgid and request.get("op") == "call":
                used[(current[0], name, watch is not None)].append(isolation.tree_cpu_seconds(self.pgid) - before)

    client.Session._request = timed
    generous = Limits(call_cpu_s=30, large_call_cpu_s=30, call_timeout_s=60)
    print(f"# {describe()}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with Grader(generous) as grader:
            for assignment in args.only:
                solution = release(assignment, work / "solution" / assignment, solutions=True) / f"{assignment}.ipynb"
                made = courses.build(assignment, solution, work / assignment)
                notebooks = [("solution", solution)] + [(s, work / assignment / f"{s}.ipynb")
                                                        for s, e in made.items() if e.kind == "alternative"]
                current[0] = assignment
                for student, path in notebooks:
                    result = grader.grade(path, assignment)
                    if result.score != sum(e.max_score for e in result.exercises if not e.manual):
                        print(f"  note: {assignment} {student} scored {result.score:g}")
                print(f"{assignment}: {len(notebooks)} honest notebooks graded", flush=True)
    d = Limits()
    print("\n| assignment | function | calls | largest CPU per call | budget | budget / largest |")
    print("|---|---|---:|---:|---:|---:|")
    for (assignment, name, large), values in sorted(used.items(), key=lambda kv: -max(kv[1])):
        budget = d.large_call_cpu_s if large else d.call_cpu_s
        top = max(values)
        ratio = f"{budget / top:.0f}x" if top > 0 else "(below one tick)"
        print(f"| {assignment} | {name}{' (memory measured)' if large else ''} | {len(values)} | {top * 1000:.0f} ms | "
              f"{budget:g} s | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
