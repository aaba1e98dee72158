"""Busy processes beside a run under test: what a loaded grading machine looks like."""

import os
import subprocess
import sys


class CpuLoad:
    """Busy processes beside the batch (one per core), each ending by itself after ``seconds``."""

    def __init__(self, seconds: float = 420):
        code = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"
        self.procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(os.cpu_count() or 2)]

    def close(self):
        for p in self.procs:
            p.kill()
            p.wait()
