"""The jail's filesystem: a fresh root that holds only what the student's Python needs.

Nothing here is a list of places to hide. The zygote derives, once, after its preload, what its interpreter
uses (:func:`plan_root`): the standard library and the installed packages (sysconfig's paths, the folders on
``sys.path``, a virtual environment as a whole), the executable, every file it has mapped (the shared
libraries numpy and torch loaded, and their folders, so that a later ``dlopen`` finds their neighbours),
the dynamic loader's cache, five device nodes and, of seqgrade itself, ``grader/__init__.py`` and the
``grader/jail`` package only. Per jail, the monitor binds exactly these into an empty tmpfs, read-only,
with a small read-only ``/tmp`` holding ``/tmp/scratch``, the only writable place (:func:`build_root`);
the jail's init mounts a private ``/proc`` there and makes it the root, detaching the old one
(:func:`enter_root`). A second copy of the course in ``/opt``, a TA's home, other submissions, ``/etc``:
none of them is in the tree, read-only or otherwise.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import re
import stat
import sys
import sysconfig
from dataclasses import dataclass

from .errors import SeqgradeError
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

SCRATCH = "/tmp/scratch"
STAGE = "/tmp"  # where the monitor assembles the new root, in its own mount namespace (nothing else sees it)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
LOADER_CACHE = "/etc/ld.so.cache"  # where dlopen looks a library up by name
MNT_DETACH = 2
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41}  # syscall numbers (glibc has no wrapper)
_ST_TO_MS = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME, 4096: MS_RELATIME}
_SHARED_OBJECT = re.compile(r"\.so(\.[0-9.]+)?$")

_libc = ctypes.CDLL(None, use_errno=True)


class JailSetupError(SeqgradeError):
    """The jail's root cannot be built so that it shows Python without showing the course."""


@dataclass(frozen=True)
class Root:
    """What the jail's root holds: real paths bound read-only, and symbolic links made as on the host."""

    binds: tuple[str, ...]
    links: tuple[tuple[str, str], ...]
    refused: str = ""  # why no root can be built (raised by build_root: the rlimits level needs no root)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _resolve(path: str, links: list[tuple[str, str]], depth: int = 0) -> str:
    """The real path of ``path``, appending to ``links`` each symbolic link met on the way (so that the
    jail can find the file by the same name: /lib -> usr/lib, a venv's python -> /usr/bin/python3)."""
    if depth > 40:
        raise OSError(errno.ELOOP, "too many symbolic links", path)
    done, parts = "/", [p for p in path.split("/") if p and p != "."]
    for i, part in enumerate(parts):
        if part == "..":
            done = os.path.dirname(done)
            continue
        here = os.path.join(done, part)
        if os.path.islink(here):
            target = os.readlink(here)
            links.append((here, target))
            return _resolve(os.path.join(done, target, *parts[i + 1 :]), links, depth + 1)
        done = here
    return done


def _venv_of(path: str, course: str) -> str | None:
    """The virtual environment (a folder with a pyvenv.cfg) inside ``course`` that holds ``path``, if any."""
    folder = path
    while _inside(folder, course) and folder != course:
        if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
            return folder
        folder = os.path.dirname(folder)
    return None


def _mapped_files(maps: str) -> list[str]:
    found = set()
    with open(maps) as f:
        for line in f:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].startswith("/") and not fields[5].endswith(" (deleted)"):
                found.add(fields[5].rstrip("\n"))
    return sorted(found)


def unused_package_folders() -> list[str]:
    """The package folders this Python knows (site's: the base interpreter's site-packages, the user's) that
    it does not import from: none of them is on sys.path, nor holds an entry of it (real paths)."""
    import site

    known = [*site.getsitepackages([sys.base_prefix, sys.base_exec_prefix])]
    if site.ENABLE_USER_SITE is not False:
        known.append(site.getusersitepackages())
    used = [os.path.realpath(p) for p in sys.path if p]
    return sorted(
        real
        for real in {os.path.realpath(k) for k in known if os.path.isdir(k)}
        if not any(_inside(u, real) for u in used)
    )


def _without(path: str, leave_out: list[str], links: list[tuple[str, str]]) -> list[str]:
    """``path`` as binds that leave out the folders ``leave_out``: itself where it holds none of them, else its
    entries (recursively where an entry holds one); a symbolic link among them is recorded in ``links``, made in
    the jail as on the host, never bound (which would show where it leads)."""
    if not os.path.isdir(path) or os.path.islink(path) or not any(_inside(f, path) for f in leave_out):
        return [path]
    if path in leave_out:
        return []
    found = []
    for entry in sorted(os.listdir(path)):
        inner = os.path.join(path, entry)
        if os.path.islink(inner):
            links.append((inner, os.readlink(inner)))
        elif inner not in leave_out:
            found += _without(inner, leave_out, links)
    return found


def plan_root(maps: str = "/proc/self/maps") -> Root:
    """What this interpreter needs in the jail, read from the interpreter itself (run in the zygote after
    its preload, so ``maps`` lists every library numpy and torch loaded).

    The interpreter's prefix is not bound whole: it may be /usr, which holds /usr/local/src and more. Its
    parts Python uses are: sysconfig's stdlib, platstdlib, purelib and platlib, a virtual environment as a
    whole, the folders on sys.path that Python has imported from (not every folder there: it holds the
    grader's own script folder or working folder, which may be a TA's home or /tmp), the executable, and
    the mapped files (a shared object brings its whole folder, where a later dlopen looks for its
    neighbours: torch/lib, the system's library folder). Nothing of the folder that holds seqgrade's
    ``grader`` package (the checkout) is bound, except a virtual environment inside it and
    ``grader/__init__.py`` and ``grader/jail``."""
    jail = os.path.dirname(os.path.realpath(__file__))
    package = os.path.dirname(jail)
    course = os.path.dirname(package)
    wanted = [sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")]
    # A module's __file__ is the sys.path entry it was found in, joined with its name: no need to resolve.
    loaded = {
        os.path.abspath(f)
        for f in (getattr(m, "__file__", None) for m in list(sys.modules.values()))
        if isinstance(f, str)
    }
    used = [p for p in sys.path if p and any(_inside(f, entry) for entry in [os.path.abspath(p)] for f in loaded)]
    venv = [sys.prefix] if sys.prefix != sys.base_prefix else []
    names = [*wanted, *used, *venv, sys.executable]
    needed = set(wanted)
    for path in _mapped_files(maps):
        folder = os.path.dirname(path)
        names.append(folder if _SHARED_OBJECT.search(path) else path)
        needed.add(names[-1])
    links: list[tuple[str, str]] = []
    binds, refused = set(), ""
    for name in names:
        if not name or not os.path.exists(name):
            continue
        found: list[tuple[str, str]] = []
        real = _resolve(os.path.abspath(name), found)
        if _inside(course, real) or (_inside(real, course) and _venv_of(real, course) is None):
            if name in needed:
                refused = (
                    f"{real} holds both Python's packages and seqgrade's {package}: the jail could not show "
                    f"one without the other. Install seqgrade in editable mode (pip install -e) or run it "
                    f"from a checkout, outside the folders of the Python it uses"
                )
            continue  # the checkout itself (on sys.path for an editable install), or a folder around it
        binds.add(_venv_of(real, course) or real)
        links += found
    binds.update([os.path.join(package, "__init__.py"), jail, LOADER_CACHE, *DEVICES])
    # The loader's cache names libraries through the root's links (/lib/x86_64-linux-gnu/libssl.so.3 when
    # /lib -> usr/lib): keep each top-level link that leads to, or above, something bound.
    for entry in os.listdir("/"):
        top = "/" + entry
        if os.path.islink(top) and any(_inside(b, os.path.realpath(top)) for b in binds):
            links.append((top, os.readlink(top)))
    kept: list[str] = []
    for path in sorted(binds):
        if os.path.exists(path) and not any(_inside(path, k) for k in kept):
            kept.append(path)
    # A folder bound whole for what Python uses in it may also hold a package folder Python does not use (the
    # base interpreter's site-packages beside its standard library, in the folder of libpython): that folder
    # is bound entry by entry instead, without it.
    unused = unused_package_folders()
    kept = [entry for path in kept for entry in _without(path, unused, links)]
    made = sorted({(p, t) for p, t in links if not any(_inside(p, k) for k in kept)})
    return Root(binds=tuple(kept), links=tuple(made), refused=refused)


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
