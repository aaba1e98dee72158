"""The jail's filesystem: a fresh root that holds only what the student's Python needs.

:mod:`.root_plan` derives, once, in the zygote after its preload, what its interpreter uses (a :class:`Root`).
Per jail, the monitor binds exactly these into an empty tmpfs, read-only, with a small read-only ``/tmp``
holding ``/tmp/scratch``, the only writable place (:func:`build_root`); the jail's init mounts a private
``/proc`` there and makes it the root, detaching the old one (:func:`enter_root`). A second copy of the course
in ``/opt``, a TA's home, other submissions, ``/etc``: none of them is in the tree, read-only or otherwise.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat

from .isolation import (
    MS_BIND,
    MS_MOVE,
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
from .root_plan import JailSetupError, Root, _inside

SCRATCH = "/tmp/scratch"
STAGE = "/tmp"  # where the monitor assembles the new root, in its own mount namespace (nothing else sees it)
MNT_DETACH = 2
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41}  # syscall numbers (glibc has no wrapper)
_ST_TO_MS = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME, 4096: MS_RELATIME}

_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount_points() -> list[str]:
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = (
                line.split()[4]
                .replace("\\040", " ")
                .replace("\\011", "\t")
                .replace("\\012", "\n")
                .replace("\\134", "\\")
            )
            points.append(mp)
    return points


def _make_mount_point(path: str, is_dir: bool) -> None:
    if is_dir:
        os.makedirs(path, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


def _read_only(mp: str) -> None:
    """Remount ``mp`` read-only, keeping the flags it has (a user namespace may not clear them) and adding
    nosuid, and nodev except on a device node."""
    st = os.statvfs(mp)
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID
    flags |= sum(ms for st_flag, ms in _ST_TO_MS.items() if st.f_flag & st_flag)
    if not stat.S_ISCHR(os.stat(mp).st_mode):
        flags |= MS_NODEV
    mount(None, mp, None, flags)


def build_root(root: Root, hide: list[str], scratch_mb: int, owner: tuple[int, int]) -> str:
    """In the monitor's fresh mount namespace: assemble the jail's root at STAGE and return its path.

    Every bind is read-only; ``/tmp/scratch`` (a tmpfs owned by ``owner``) is the only writable place.
    ``hide``: folders that must stay invisible even where one of the binds holds them (submissions or
    outputs kept in a virtual environment's folder, say); elsewhere the root has no place for them."""
    if root.refused:
        raise JailSetupError(root.refused)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    held = []  # opened before the stage covers /tmp, so that anything under /tmp can still be bound
    for path in root.binds:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        held.append((fd, path, stat.S_ISDIR(os.fstat(fd).st_mode)))
    mount("tmpfs", STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    ours = [STAGE]
    # First every folder, file and link of the skeleton, all in the tmpfs; only then the binds, so that
    # nothing is ever created through a bind (which would write to the host).
    for _, path, is_dir in held:
        _make_mount_point(STAGE + path, is_dir)
    for path, target in root.links:
        os.makedirs(os.path.dirname(STAGE + path), mode=0o755, exist_ok=True)
        os.symlink(target, STAGE + path)
    for folder in ("/proc", "/tmp"):
        os.makedirs(STAGE + folder, mode=0o755, exist_ok=True)
    os.mkdir(STAGE + SCRATCH, 0o700)
    for fd, path, _ in held:
        mount(f"/proc/self/fd/{fd}", STAGE + path, None, MS_BIND | MS_REC)
        os.close(fd)
        ours.append(STAGE + path)
    for path in sorted({os.path.realpath(h) for h in hide}):
        if os.path.isdir(STAGE + path) and any(_inside(path, b) and b != path for b in root.binds):
            mount("tmpfs", STAGE + path, "tmpfs", MS_NOSUID | MS_NODEV, "size=4k,mode=0755")
            ours.append(STAGE + path)
    uid, gid = owner
    mount("tmpfs", STAGE + SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV, f"size={scratch_mb}m,mode=0700,uid={uid},gid={gid}")
    for mp in sorted(set(_mount_points()), key=len):
        if not _inside(mp, STAGE) or mp == STAGE + SCRATCH:
            continue
        try:
            _read_only(mp)
        except OSError:
            if any(_inside(mp, o) for o in ours):
                raise
            # a mount of the host's own below /tmp, covered by the stage: detached with the old root
    return STAGE


def enter_root(stage: str) -> None:
    """In the jail's init (the first process of its PID namespace): mount a private /proc, which shows only
    the jail's processes, then make ``stage`` the root and detach the old one, so that nothing else of the
    machine can be reached. (/proc first: a user namespace may mount proc only while one is visible.)"""
    mount("proc", stage + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir(stage)
    number = _PIVOT_ROOT.get(platform.machine())
    moved = False
    if number is not None:
        # pivot_root(".", "."): the old root ends up stacked on the new one, and is unmounted from there.
        if _libc.syscall(ctypes.c_long(number), b".", b".") == 0:
            _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "umount2 the old root")
            moved = True
        elif ctypes.get_errno() != errno.EINVAL:  # EINVAL: the old root is the initramfs, which cannot move
            _check(-1, "pivot_root")
    if not moved:
        mount(".", "/", None, MS_MOVE)
        os.chroot(".")
    os.chdir("/")
