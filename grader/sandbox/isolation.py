"""Linux isolation primitives through ctypes: namespaces, mounts, rlimits, capabilities, cgroups.

Used in the zygote's forked children before any student code runs. Nothing here imports the
reference or the checks.
"""
from __future__ import annotations

import ctypes
import functools
import os
import resource
import signal
import sys
import time

from .touched import Touched

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 32, 4096, 8192, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 1024, 2048, 1 << 21, 1 << 24
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 1, 36, 38, 24
_ST_TO_MS = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME, 4096: MS_RELATIME}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _b(s):
    return None if s is None else os.fsencode(s)


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source, target, fstype, flags: int = 0, data=None) -> None:
    _check(_libc.mount(_b(source), _b(target), _b(fstype), flags, _b(data)), f"mount {target}")


def prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(option, arg, 0, 0, 0), f"prctl {option}")


def set_parent_death_signal(sig: int) -> None:
    prctl(PR_SET_PDEATHSIG, sig)


def become_subreaper() -> None:
    prctl(PR_SET_CHILD_SUBREAPER, 1)


def map_current_user(uid: int, gid: int) -> None:
    """After unshare(CLONE_NEWUSER): appear as root inside, mapped to the real (unprivileged) user outside."""
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"0 {gid} 1")


def _mount_points() -> list[str]:
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4].replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
            points.append(mp)
    return points


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


SCRATCH = "/tmp/scratch"


def build_filesystem(hide: list[str], keep: list[str], scratch_mb: int, owner: tuple[int, int]) -> None:
    """In a fresh mount namespace: a new, read-only /tmp holding ``/tmp/scratch``, the only writable place;
    ``hide`` directories behind empty tmpfs, except ``keep`` paths inside them (or inside /tmp); everything
    else read-only."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    covered = [*hide, "/tmp"]
    # Hold every path to keep open before anything covers it; bind it back later from /proc/self/fd.
    held = []
    for path in keep:
        if any(_inside(path, c) for c in covered) and os.path.isdir(path):
            held.append((os.open(path, os.O_PATH | os.O_DIRECTORY), path))
    uid, gid = owner
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for path in sorted(set(hide), key=len):
        if os.path.isdir(path) and not os.path.islink(path) and not _inside(path, "/tmp"):
            mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for fd, path in held:
        os.makedirs(path, exist_ok=True)
        mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
    os.mkdir(SCRATCH, 0o700)
    mount("tmpfs", SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV, f"size={scratch_mb}m,mode=0700,uid={uid},gid={gid}")
    for mp in sorted(set(_mount_points()), key=len):
        if mp == SCRATCH or _inside(mp, "/proc") or _inside(mp, "/sys") or mp.startswith("/dev/pts"):
            continue
        try:
            st = os.statvfs(mp)
        except OSError:
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        flags |= sum(ms for st_flag, ms in _ST_TO_MS.items() if st.f_flag & st_flag)
        try:
            mount(None, mp, None, flags)
        except OSError:
            if mp == "/" or any(_inside(mp, h) for h in covered):
                raise
    try:  # /sys: read-only too
        mount(None, "/sys", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        pass


def mount_private_proc() -> None:
    """Inside the new PID namespace: a /proc that shows only the sandbox's own processes."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def mapped_bytes() -> int:
    """This process's virtual size (what RLIMIT_AS counts)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def tasks_of(uid: int) -> int:
    """Tasks (processes and threads) whose real uid is ``uid``, as this process's /proc shows them."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError, IndexError):
            continue
    return count


_TICKS = os.sysconf("SC_CLK_TCK")


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


def tree_cpu_seconds(root: int) -> float:
    """User CPU seconds of process ``root``, its descendants and the children they reaped, read from /proc
    by another process (the sandbox cannot change it). System time is left out on purpose: it is mostly
    page faults, whose cost varies tenfold with the host (allocating 1 GB took 0.1 to 1.6 s of system
    time here, run to run), while computation shows up as user time; code that only sleeps or makes
    system calls meets the wall-clock backstop instead."""
    ticks = 0
    for pid in tree_pids(root):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[13])  # utime, cutime
        except (OSError, ValueError, IndexError):
            continue
    return ticks / _TICKS


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
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split(None, 1)[0]
            except (OSError, IndexError):
                continue
            if state in ("R", "D"):
                return True
    return False


@functools.cache
def fix_mmap_threshold(size: int) -> bool:
    """glibc: map every allocation of ``size`` bytes or more on its own and stop adjusting the threshold
    (mallopt M_MMAP_THRESHOLD), so memory freed by a call leaves the process. False where not glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(-3, int(size)))  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
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
    resident and the call fills counts too."""

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


def set_rlimits(limits, cpu_s: int, uid: int) -> None:
    """The address-space limit is what is mapped now (numpy, torch) plus the budget, so an oversized
    allocation fails at once with MemoryError, the same way every time, instead of racing a kill.
    Likewise the process limit counts what ``uid`` (the user the student will run as) already runs:
    without a user namespace that may be a TA's own desktop session."""
    mb = 2**20
    for res, value in (
        (resource.RLIMIT_AS, mapped_bytes() + limits.memory_mb * mb),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * mb),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_CPU, cpu_s),
        (resource.RLIMIT_NPROC, tasks_of(uid) + limits.nproc),
    ):
        resource.setrlimit(res, (value, value))


def kill_children(timeout_s: float = 10.0) -> None:
    """SIGKILL every child of this process and reap it, until none is left. Run by a subreaper, this
    ends whatever escaped a process-group kill (setsid, double fork): orphans come back here."""
    me = str(os.getpid())
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = f.read().rsplit(")", 1)[1].split()[1]
                if ppid == me:
                    os.kill(int(pid), signal.SIGKILL)
            except (OSError, IndexError):
                continue
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                time.sleep(0.01)
        except ChildProcessError:
            return


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


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_privileges(uid: int | None, gid: int | None) -> None:
    """Lose every privilege: as real root switch to an unprivileged uid; in a user namespace clear the
    capability sets. Either way forbid regaining privileges through exec."""
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    if uid is not None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)  # from root to non-root: every capability is cleared
        return
    for cap in range(64):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError:
            break
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def current_cgroup_dir(controller: str, pid: int | str = "self") -> str | None:
    """Writable cgroup v1 directory of process ``pid`` (this one by default) for ``controller``, or None."""
    base = f"/sys/fs/cgroup/{controller}"
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controller in controllers.split(","):
                    d = base + path
                    return d if os.access(d, os.W_OK) else None
    except OSError:
        return None
    return None


def _remove_stale_cgroups(parent: str) -> None:
    """Remove ``seqgrade-<pid>`` cgroups whose monitor died before it could (killed with its zygote).
    The kernel refuses to remove a cgroup that still holds a process, so this never disturbs a live one."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for entry in names:
        pid = entry.removeprefix("seqgrade-")
        if entry.startswith("seqgrade-") and pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            try:
                os.rmdir(os.path.join(parent, entry))
            except OSError:
                pass


def join_new_cgroups(name: str, memory_bytes: int, pids: int) -> list[str]:
    """Best effort (needs root and cgroup v1): put this process in fresh memory and pids cgroups."""
    made = []
    for controller, files in (("memory", {"memory.limit_in_bytes": memory_bytes, "memory.swappiness": 0}),
                              ("pids", {"pids.max": pids})):
        parent = current_cgroup_dir(controller)
        if parent is None:
            continue
        _remove_stale_cgroups(parent)
        d = os.path.join(parent, name)
        try:
            os.makedirs(d, exist_ok=True)
            for fname, value in files.items():
                try:
                    with open(os.path.join(d, fname), "w") as f:
                        f.write(str(value))
                except OSError:
                    if fname != "memory.swappiness":
                        raise
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            made.append(d)
        except OSError:
            continue
    return made


def leave_cgroups(dirs: list[str]) -> None:
    for d in dirs:
        parent = os.path.dirname(d)
        try:
            with open(os.path.join(parent, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            os.rmdir(d)
        except OSError:
            pass


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
    return {"namespaces": ok, "reason": "" if ok else message.decode(errors="replace") or "unknown failure",
            "root": os.geteuid() == 0, "python": sys.version.split()[0]}
