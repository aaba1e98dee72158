"""Busy processes beside a run under test: what a loaded grading machine looks like."""

import os
import subprocess
import sys


class CpuLoad:
    """Busy processes beside the batch, each ending by itself after ``seconds``: one per core, or, with ``cpus``,
    one kept on each CPU named (the CPU a one-worker batch grades on: as loaded as with one per core, at half
    the cost to whatever else the machine runs, such as the suite's other workers)."""

    def __init__(self, seconds: float = 420, cpus: list[int] | None = None):
        spin = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"
        if cpus:
            codes = [f"import os\nos.sched_setaffinity(0, {{{cpu}}})\n{spin}" for cpu in cpus]
        else:
            codes = [spin] * (os.cpu_count() or 2)
        self.procs = [subprocess.Popen([sys.executable, "-c", code]) for code in codes]

    def close(self):
        for p in self.procs:
            p.kill()
            p.wait()
