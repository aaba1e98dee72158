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
import time

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 32, 4096, 8192, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 1024, 2048, 1 << 21, 1 << 24
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 1, 36, 38, 24
PR_SET_THP_DISABLE = 41

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


@functools.cache
def _glibc():
    """The C library's handle where it is glibc (mallopt and malloc_trim are glibc's), else None."""
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


@functools.cache
def fix_mmap_threshold(size: int) -> bool:
    """glibc: map every allocation of ``size`` bytes or more on its own and stop adjusting the threshold
    (mallopt M_MMAP_THRESHOLD), so memory freed by a call leaves the process. False where not glibc."""
    try:
        return bool(_glibc().mallopt(-3, int(size)))  # M_MMAP_THRESHOLD
    except AttributeError:  # no glibc (None), or no mallopt in it
        return False


def release_free_memory() -> bool:
    """glibc: give the heap's free memory back to the system (malloc_trim), so that what is allocated next is
    made resident anew (and shows in a high-water mark) instead of reusing pages freed earlier, which are still
    resident. False where not glibc."""
    try:
        _glibc().malloc_trim(0)
        return True
    except AttributeError:
        return False


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


def join_new_cgroups(name: str, memory_bytes: int, pids: int) -> list[tuple[int, str]]:
    """Best effort (needs root and cgroup v1): put this process in fresh memory and pids cgroups. Returns, for
    each one joined, an open descriptor of its parent and its name, for :func:`leave_cgroups`: the monitor
    leaves them once the jail has ended, when its jail's init has made the jail's root the root of the mount
    namespace the two share, so that no path of the machine's (/sys/fs/cgroup) is reachable any more."""
    made = []
    for controller, files in (
        ("memory", {"memory.limit_in_bytes": memory_bytes, "memory.swappiness": 0}),
        ("pids", {"pids.max": pids}),
    ):
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
            held = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                with open(os.path.join(d, "cgroup.procs"), "w") as f:
                    f.write(str(os.getpid()))
            except OSError:
                os.close(held)
                raise
            made.append((held, name))
        except OSError:
            continue
    return made


def leave_cgroups(joined: list[tuple[int, str]]) -> None:
    """Move this process back to each parent of ``joined`` and remove the cgroup it left (by descriptor: see
    :func:`join_new_cgroups`). A cgroup that still holds a process stays, for the next jail's monitor to
    remove (_remove_stale_cgroups)."""
    for parent, name in joined:
        try:
            procs = os.open("cgroup.procs", os.O_WRONLY, dir_fd=parent)
            try:
                os.write(procs, str(os.getpid()).encode())
            finally:
                os.close(procs)
            os.rmdir(name, dir_fd=parent)
        except OSError:
            pass
        finally:
            os.close(parent)


def pin_cpus(cpus) -> None:
    """Run on ``cpus`` (the grader's spec: the CPU of the grading thread that waits on this jail; see
    grader.sandbox.cpus), before any student code, so every process of the jail inherits it. None, refused or
    malformed: run anywhere."""
    if not cpus or not hasattr(os, "sched_setaffinity"):
        return
    try:
        os.sched_setaffinity(0, {int(c) for c in list(cpus)[:1024]})
    except (OSError, TypeError, ValueError):
        pass


def small_pages_only() -> None:
    """Back this process's memory, and that of every process it forks, with ordinary 4 KiB pages (prctl
    PR_SET_THP_DISABLE). numpy asks the kernel for transparent huge pages for large arrays; with them, a huge
    page a call only reads counts 2 MiB in the memory the grader measures it touched (grader.sandbox.touched),
    and making a large array takes as long as the kernel needs to find or compact 2 MiB of free memory, which
    varies with the machine's state: a loop hoarding arrays ran out of memory on one run and out of CPU time on
    the next. Where the kernel refuses (too old): as before."""
    try:
        prctl(PR_SET_THP_DISABLE, 1)
    except OSError:
        pass
