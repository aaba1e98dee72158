"""Memory a call touched, whatever earlier cells allocated: read by the grader from /proc, outside the jail.

A process's resident size and the jail's cgroup usage count a page once, when it is first made resident;
a buffer an earlier cell allocated and filled is resident already, so a call that builds the whole score
matrix inside it adds nothing to either. What the call touches still shows in the pages' referenced
bits: the grader clears them (``1`` written to /proc/PID/clear_refs) before the call and afterwards sums,
over the mappings of the jail's processes, the memory /proc/PID/smaps reports as referenced (pages read or
written since) where the pages are the processes' own (:func:`held_kb`): every private anonymous mapping
(the heap, numpy's and torch's buffers), every shared mapping that may be written (``mmap.mmap(-1, n)``, a
file of the scratch folder mapped shared, shared memory), and the private copies written into a private
mapping of a file. Pages only read from files (libraries, the interpreter) are not counted. Honest blockwise
attention touched 11 MiB here (its inputs, its blocks, the interpreter's own objects); the 64 MiB score
matrix written into a buffer made earlier touches 67 MiB, whichever kind of mapping holds it.
"""

from __future__ import annotations

import time

ANONYMOUS = ("", "[heap]", "[stack]")  # mapping names of private anonymous memory ("[anon:...]" too)


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


def held_kb(perms: str, name: str, fields: dict, flags: set) -> int:
    """Of one mapping of /proc/PID/smaps (its permissions, name, ``kB`` fields and VmFlags), the referenced kB
    that are the process's own memory: all of a private anonymous mapping; all of a shared mapping that may be
    written (``mw``, kept when mprotect takes the write permission away), anonymous or a file; of a private
    mapping of a file, only its written copies (at most its ``Anonymous`` kB)."""
    referenced = fields.get("Referenced", 0)
    if perms[3:4] == "s":
        return referenced if "mw" in flags else 0
    if name in ANONYMOUS or name.startswith("[anon"):
        return referenced
    return min(referenced, fields.get("Anonymous", 0))


def _mappings(lines):
    """``(perms, name, fields, flags)`` of each mapping of an smaps file."""
    mapping = None
    for line in lines:
        head = line.split(None, 1)[0] if line.strip() else ""
        if "-" in head and not head.endswith(":"):  # a mapping's first line: range perms offset dev inode [name]
            if mapping:
                yield mapping
            parts = line.split(None, 5)
            mapping = (parts[1] if len(parts) > 1 else "----", parts[5].strip() if len(parts) > 5 else "", {}, set())
        elif mapping and head == "VmFlags:":
            mapping[3].update(line.split()[1:])
        elif mapping and head.endswith(":") and line.rstrip().endswith(" kB"):
            mapping[2][head[:-1]] = int(line.split()[1])
    if mapping:
        yield mapping


def touched_bytes(pids) -> int:
    """The memory of ``pids`` referenced since their bits were last cleared that is their own (:func:`held_kb`),
    in bytes."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps") as f:
                total += sum(held_kb(*mapping) for mapping in _mappings(f)) * 1024
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
