"""The jail's filesystem, built by the monitor in its fresh mount namespace before any student code runs."""
from __future__ import annotations

import os

from .isolation import (
    MS_BIND,
    MS_NOATIME,
    MS_NODEV,
    MS_NODIRATIME,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_RELATIME,
    MS_REMOUNT,
    mount,
)

_ST_TO_MS = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME, 4096: MS_RELATIME}


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
