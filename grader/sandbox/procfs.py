"""What the grader measures of a jail from outside it, through /proc: its processes, their CPU time, whether
they compute, their peak memory; and whether this machine can make namespaces at all. The grader's side:
nothing here runs in the student's process."""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

from grader.jail.isolation import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    CLONE_NEWUTS,
    MS_PRIVATE,
    MS_REC,
    current_cgroup_dir,
    map_current_user,
    mount,
    unshare,
)

from .touched import Touched

_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_pids(root: int | str) -> list:
    """Process ``root`` and its descendants, read from /proc (``root`` may be "self")."""
    found, stack, seen = [], [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        found.append(pid)
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    stack.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return found


def stat_fields(path: str) -> list[str]:
    """The fields of a /proc ``stat`` file after the command name (which may hold spaces and ")"): index 0
    is the state, 1 the parent's pid, 11 utime, 13 cutime, 21 rss (proc(5)'s fields 3 on)."""
    with open(path) as f:
        return f.read().rsplit(")", 1)[1].split()


class TreeUsage(NamedTuple):
    cpu_s: float  # user CPU seconds, the reaped children's included
    resident_mb: float  # memory resident now, over the live processes


def tree_usage(root: int) -> TreeUsage:
    """User CPU seconds and resident memory of process ``root`` and its descendants, read from /proc by
    another process (the sandbox cannot change them). System time is left out on purpose: it is mostly
    page faults, whose cost varies tenfold with the host (allocating 1 GB took 0.1 to 1.6 s of system
    time here, run to run), while computation shows up as user time; code that only sleeps or makes
    system calls meets the wall-clock backstop instead."""
    ticks = pages = 0
    for pid in tree_pids(root):
        try:
            fields = stat_fields(f"/proc/{pid}/stat")
            ticks += int(fields[11]) + int(fields[13])  # utime, cutime
            pages += int(fields[21])  # rss
        except (OSError, ValueError, IndexError):
            continue
    return TreeUsage(ticks / _TICKS, pages * _PAGE / 2**20)


def tree_busy(root: int) -> bool:
    """Whether any thread of process ``root`` or its descendants is running, waiting for a CPU or waiting
    for the disk (state R or D in /proc). False means every thread sleeps, is stopped or has ended: the
    tree waits for something (a timer, a lock nobody holds, input that never comes) and computes nothing,
    however loaded the machine is (a thread that waits for a CPU shows R)."""
    for pid in tree_pids(root):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                state = stat_fields(f"/proc/{pid}/task/{tid}/stat")[0]
            except (OSError, IndexError):
                continue
            if state in ("R", "D"):
                return True
    return False


def reset_peak_memory(pid: int | str) -> bool:
    """Start a new peak-memory measurement of process ``pid`` ("self" for this one): Linux resets its
    resident-set high-water mark (VmHWM) when "5" is written to /proc/PID/clear_refs. False where that
    is not possible (not Linux, or not allowed)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def memory_kb(pid: int | str) -> dict[str, int]:
    """VmRSS and VmHWM (resident now, and the most resident since the last reset) of ``pid``, in kB."""
    found = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    found[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return {}
    return found


class PeakMemory:
    """The most memory the jail whose monitor is ``root`` held during a stretch of time beyond what it
    held at the start, in bytes, measured by the grader; ``bytes`` is None where it cannot be measured.

    Where the jail has a memory cgroup of its own (seqgrade running as root, cgroup v1) this is the
    cgroup's recorded maximum, which the grader resets before the call and the student's process can
    neither see nor reset. Otherwise it is, for each process of the tree, its resident high-water mark
    (VmHWM, reset through /proc/PID/clear_refs) minus what it held at the start, a process that started
    meanwhile counting whole: there a process that resets its own mark could hide a peak, so that path is
    for machines without root (and for the nbgrader hook, which has no isolation at all). Either way it
    is at least what the call touched (:mod:`grader.sandbox.touched`), so memory an earlier cell made
    resident and the call fills counts too, in private, shared or file mappings alike."""

    def __init__(self, root: int | str):
        self.root, self.bytes, self.start, self.cgroup = root, None, {}, None
        group = current_cgroup_dir("memory", root) if root != "self" else None
        if group and os.path.basename(group).startswith("seqgrade-"):
            try:
                with open(os.path.join(group, "memory.max_usage_in_bytes"), "w") as f:
                    f.write("0")
                with open(os.path.join(group, "memory.usage_in_bytes")) as f:
                    self.start_usage = int(f.read())
                self.cgroup = group
            except (OSError, ValueError):
                pass
        if not self.cgroup:
            for pid in tree_pids(root):
                if reset_peak_memory(pid):
                    self.start[pid] = memory_kb(pid).get("VmRSS", 0)
            self.sampled = 0
        self.touched = Touched(lambda: tree_pids(root))

    def sample(self) -> None:
        """Note what the tree holds and has touched right now (called while waiting for a reply), so that a
        process resetting its own high-water mark or referenced bits still shows what it held when sampled."""
        self.touched.sample()
        if self.cgroup or not self.start:
            return
        now = sum(max(0, memory_kb(pid).get("VmRSS", 0) - self.start.get(pid, 0)) for pid in tree_pids(self.root))
        self.sampled = max(self.sampled, now)

    def stop(self) -> int | None:
        touched = self.touched.stop()
        if self.cgroup:
            try:
                with open(os.path.join(self.cgroup, "memory.max_usage_in_bytes")) as f:
                    self.bytes = max(0, int(f.read()) - self.start_usage, touched)
            except (OSError, ValueError):
                self.bytes = None
            return self.bytes
        if not self.start:
            return None
        total = 0
        for pid in tree_pids(self.root):
            peak = memory_kb(pid).get("VmHWM")
            if peak is not None:
                total += max(0, peak - self.start.get(pid, 0))
        self.bytes = max(total * 1024, self.sampled * 1024, touched)
        return self.bytes


def unreadable_for(uid: int, paths) -> str | None:
    """The first of ``paths`` (or a folder above it) that user ``uid``, in no group of ours, cannot read."""
    for path in paths:
        parts = os.path.realpath(path).split("/")
        for i in range(2, len(parts) + 1):
            folder = "/".join(parts[:i])
            try:
                st = os.stat(folder)
            except OSError:
                continue
            need = 0o5 if i == len(parts) else 0o1  # read and enter the path itself; enter the folders above
            bits = (st.st_mode >> 6) & 7 if st.st_uid == uid else st.st_mode & 7
            if bits & need != need:
                return folder
    return None


def probe() -> dict:
    """What this machine allows, checked in a throw-away child: {"namespaces": bool, "reason": str}."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code = 0
        try:
            flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID
            if os.geteuid() != 0:
                uid, gid = os.getuid(), os.getgid()
                unshare(flags | CLONE_NEWUSER)
                map_current_user(uid, gid)
            else:
                unshare(flags)
            mount(None, "/", None, MS_REC | MS_PRIVATE)
        except OSError as exc:
            os.write(w, str(exc).encode()[:500])
            code = 1
        os._exit(code)
    os.close(w)
    message = b""
    while chunk := os.read(r, 4096):
        message += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    ok = os.waitstatus_to_exitcode(status) == 0
    return {
        "namespaces": ok,
        "reason": "" if ok else message.decode(errors="replace") or "unknown failure",
        "root": os.geteuid() == 0,
        "python": sys.version.split()[0],
    }
