"""Memory a call touched, whatever earlier cells allocated: read by the grader from /proc, outside the jail.

A process's resident size and the jail's cgroup usage count a page once, when it is first made resident;
a buffer an earlier cell allocated and filled is resident already, so a call that builds the whole score
matrix inside it adds nothing to either. What the call touches still shows in the pages' referenced
bits: the grader clears them (``1`` written to /proc/PID/clear_refs) before the call and afterwards sums,
over the anonymous mappings of the jail's processes, the memory /proc/PID/smaps reports as referenced
(pages read or written since). Honest blockwise attention touched 11 MiB here (its inputs, its blocks, the
interpreter's own objects); the 64 MiB score matrix written into a buffer made earlier touches 67 MiB.
"""
from __future__ import annotations

import time

ANONYMOUS = ("", "[heap]", "[stack]")  # mapping names of anonymous memory ("[anon:...]" too)


def forget_touched(pids) -> bool:
    """Clear the referenced bits of every page of ``pids``; False where that is not possible."""
    done = False
    for pid in pids:
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as f:
                f.write("1")
            done = True
        except OSError:
            continue
    return done


def touched_bytes(pids) -> int:
    """Anonymous memory of ``pids`` referenced since their bits were last cleared, in bytes."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps") as f:
                anonymous = False
                for line in f:
                    head = line.split(None, 1)[0] if line.strip() else ""
                    if "-" in head and not head.endswith(":"):  # a mapping's first line: range perms offset dev inode [name]
                        parts = line.split(None, 5)
                        name = parts[5].strip() if len(parts) > 5 else ""
                        anonymous = name in ANONYMOUS or name.startswith("[anon")
                    elif anonymous and line.startswith("Referenced:"):
                        total += int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            continue
    return total


class Touched:
    """What the processes of a tree touch from now on: ``sample()`` while the call runs (at most every
    ``period_s``, so that clearing the bits from inside before the call returns hides little), ``stop()``
    after it; both give the most seen."""

    def __init__(self, pids_of, period_s: float = 0.05):
        self.pids_of, self.period_s = pids_of, period_s
        self.ok = forget_touched(pids_of())
        self.most, self.last = 0, time.monotonic()

    def sample(self) -> None:
        if self.ok and time.monotonic() - self.last >= self.period_s:
            self.most = max(self.most, touched_bytes(self.pids_of()))
            self.last = time.monotonic()

    def stop(self) -> int:
        if self.ok:
            self.most = max(self.most, touched_bytes(self.pids_of()))
        return self.most
