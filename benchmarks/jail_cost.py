"""What the jail's fresh root costs: jail start-up and whole-notebook grading, fresh root against the old
hiding scheme, in one run.

    .venv/bin/python benchmarks/jail_cost.py            # N = 20 notebooks and 50 jails per scheme
    .venv/bin/python benchmarks/jail_cost.py --n 5 --jails 10

Two zygotes run side by side: seqgrade's own (grader.jail.filesystem builds a fresh root from what the
interpreter uses, then pivot_root) and one started by this file, in which the monitor builds the filesystem
as seqgrade did before (commit d064dea: the machine's whole tree remounted read-only, a list of places
hidden behind empty tmpfs, Python's folders bound back in; kept here, and only here, to measure against).
The measurements alternate between the two, so that load on the machine falls on both alike:

0. filesystem set-up CPU: in a child forked from this process, the CPU time (user and system, read with
   CLOCK_PROCESS_CPUTIME_ID, so load on the machine hardly changes it) the monitor spends building the
   filesystem in fresh namespaces plus what the jail's init spends entering it, ``--jails`` times each;
1. jail start-up: a session with no cell opened and closed (fork of the monitor, namespaces, the
   filesystem, the jail's init, the handshake), ``--jails`` times each;
2. grading: the ``sequence_models`` solution notebook graded ``--n`` times by a Grader on each zygote
   (after one untimed grading each, which draws the examples).

Prints medians and ranges of wall time, and the ratio fresh/old. Needs Linux namespaces (root, or
unprivileged user namespaces).
"""

from __future__ import annotations

import argparse
import gc
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The old scheme's list of places to hide (grader/sandbox/jails.py at d064dea), besides the project.
ALWAYS_HIDDEN = ["/root", "/home", "/run", "/dev/shm", "/mnt", "/media", "/srv", "/var/lib", "/var/spool", "/var/mail"]


def _old_keep_paths(project: str) -> list[str]:
    """Python's own files, bound back into what the old scheme hid (d064dea's jails._keep_paths)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    paths.update(
        p
        for p in sys.path
        if p
        and os.path.isdir(p)
        and not (p + "/").startswith(project + "/")
        and not project.startswith(p.rstrip("/") + "/")
    )
    venv = os.path.join(project, ".venv")
    if os.path.isdir(venv):
        paths.add(venv)
    return sorted(os.path.realpath(p) for p in paths if p)


def _old_build_filesystem(hide: list[str], keep: list[str], scratch_mb: int, owner: tuple[int, int]) -> None:
    """d064dea's grader.jail.filesystem.build_filesystem: a new read-only /tmp holding the scratch, ``hide``
    behind empty tmpfs except ``keep``, everything else remounted read-only."""
    from grader.jail import filesystem as fs
    from grader.jail.isolation import (
        MS_BIND,
        MS_NODEV,
        MS_NOEXEC,
        MS_NOSUID,
        MS_PRIVATE,
        MS_RDONLY,
        MS_REC,
        MS_REMOUNT,
        mount,
    )

    mount(None, "/", None, MS_REC | MS_PRIVATE)
    covered = [*hide, "/tmp"]
    held = []
    for path in keep:
        if any(fs._inside(path, c) for c in covered) and os.path.isdir(path):
            held.append((os.open(path, os.O_PATH | os.O_DIRECTORY), path))
    uid, gid = owner
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for path in sorted(set(hide), key=len):
        if os.path.isdir(path) and not os.path.islink(path) and not fs._inside(path, "/tmp"):
            mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for fd, path in held:
        os.makedirs(path, exist_ok=True)
        mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
    os.mkdir(fs.SCRATCH, 0o700)
    mount("tmpfs", fs.SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV, f"size={scratch_mb}m,mode=0700,uid={uid},gid={gid}")
    for mp in sorted(set(fs._mount_points()), key=len):
        if mp == fs.SCRATCH or fs._inside(mp, "/proc") or fs._inside(mp, "/sys") or mp.startswith("/dev/pts"):
            continue
        try:
            st = os.statvfs(mp)
        except OSError:
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY | sum(ms for f, ms in fs._ST_TO_MS.items() if st.f_flag & f)
        try:
            mount(None, mp, None, flags)
        except OSError:
            if mp == "/" or any(fs._inside(mp, h) for h in covered):
                raise
    try:
        mount(None, "/sys", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        pass


def _legacy_zygote(control_fd: int) -> None:
    """A seqgrade zygote whose monitors build the old filesystem instead of the fresh root."""
    import inspect

    from grader.jail import filesystem, zygote
    from grader.jail.isolation import MS_NODEV, MS_NOEXEC, MS_NOSUID, mount

    source = inspect.getsource(zygote)
    assert "filesystem.build_root(" in source and "filesystem.enter_root(" in source, "the zygote changed: update this"
    project, keep = str(ROOT), _old_keep_paths(str(ROOT))

    def build_root(root, hide, scratch_mb, owner):
        _old_build_filesystem(sorted({project, *ALWAYS_HIDDEN, *hide}), keep, scratch_mb, owner)
        return "/"

    def enter_root(stage):
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)

    filesystem.build_root, filesystem.enter_root = build_root, enter_root
    zygote.main(control_fd)


def _launch_legacy() -> tuple[subprocess.Popen, socket.socket]:
    from grader.sandbox.launch import clean_env

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--legacy-zygote", str(theirs.fileno())],
        pass_fds=(theirs.fileno(),),
        env=clean_env(),
        cwd="/",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    theirs.close()
    return proc, ours


def _setup_cpu(build, enter) -> float:
    """CPU seconds of one filesystem set-up: ``build`` in a monitor with fresh namespaces, ``enter`` in its
    first child (the init of the new PID namespace), each measured in its own process."""
    from grader.jail import isolation, zygote

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            uid, gid = os.getuid(), os.getgid()
            isolation.unshare(zygote.NS_FLAGS | (0 if os.geteuid() == 0 else isolation.CLONE_NEWUSER))
            if os.geteuid() != 0 or uid != 0:
                isolation.map_current_user(uid, gid)
            start = time.process_time()
            build()
            spent = time.process_time() - start
            child = os.fork()
            if child == 0:
                start = time.process_time()
                enter()
                os.write(w, f"{time.process_time() - start}\n".encode())
                os._exit(0)
            os.waitpid(child, 0)
            os.write(w, f"{spent}\n".encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        parts = f.read().split()
    os.waitpid(pid, 0)
    if len(parts) != 2:
        raise RuntimeError("a filesystem set-up failed in the measuring child")
    return sum(map(float, parts))


def _summary(name: str, fresh: list[float], old: list[float]) -> str:
    f, o = statistics.median(fresh), statistics.median(old)
    return (
        f"{name}: fresh root {f * 1000:.1f} ms (range {min(fresh) * 1000:.1f}-{max(fresh) * 1000:.1f}), "
        f"old scheme {o * 1000:.1f} ms (range {min(old) * 1000:.1f}-{max(old) * 1000:.1f}); ratio {f / o:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20, help="notebooks graded per scheme (default 20)")
    parser.add_argument("--jails", type=int, default=50, help="jails started per scheme (default 50)")
    args = parser.parse_args()

    import torch

    from grader.course.release import release
    from grader.grading import Grader
    from grader.jail import filesystem, root_plan
    from grader.jail.isolation import MS_NODEV, MS_NOEXEC, MS_NOSUID, mount
    from grader.jail.limits import Limits
    from grader.sandbox.client import Session
    from grader.sandbox.launch import launch_zygote

    torch.set_num_threads(1)
    plan, owner = root_plan.plan_root(), ((60000, 60000) if os.geteuid() == 0 else (0, 0))
    hide, keep = sorted({str(ROOT), *ALWAYS_HIDDEN}), _old_keep_paths(str(ROOT))
    schemes = {
        "fresh": (lambda: filesystem.build_root(plan, [], 64, owner), lambda: filesystem.enter_root(filesystem.STAGE)),
        "old": (
            lambda: _old_build_filesystem(hide, keep, 64, owner),
            lambda: mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC),
        ),
    }
    setup = {"fresh": [], "old": []}
    for i in range(args.jails):
        for name in ("fresh", "old") if i % 2 == 0 else ("old", "fresh"):
            setup[name].append(_setup_cpu(*schemes[name]))
    print(_summary(f"filesystem set-up CPU, {args.jails} each", setup["fresh"], setup["old"]))
    limits = Limits()
    with tempfile.TemporaryDirectory(prefix="seqgrade-jail-cost-") as tmp:
        notebook = release("sequence_models", Path(tmp) / "solution", solutions=True) / "sequence_models.ipynb"
        with (
            Grader(limits, launched=launch_zygote(), slot=31) as fresh,
            Grader(limits, launched=_launch_legacy(), slot=32) as old,
        ):
            graders = {"fresh": fresh, "old": old}
            for g in graders.values():
                g.wait_ready()
                assert g.grade(notebook).status == "graded"
            jails = {"fresh": [], "old": []}
            for i in range(args.jails):
                for name in ("fresh", "old") if i % 2 == 0 else ("old", "fresh"):
                    start = time.perf_counter()
                    Session(graders[name]._zygote, [], limits).open().close()
                    jails[name].append(time.perf_counter() - start)
            print(_summary(f"jail start-up, {args.jails} each", jails["fresh"], jails["old"]))
            grading = {"fresh": [], "old": []}
            scores = set()
            for i in range(args.n):
                for name in ("fresh", "old") if i % 2 == 0 else ("old", "fresh"):
                    gc.collect()
                    start = time.perf_counter()
                    result = graders[name].grade(notebook)
                    grading[name].append(time.perf_counter() - start)
                    scores.add((result.status, result.score))
            print(_summary(f"grading the sequence_models solution, {args.n} each", grading["fresh"], grading["old"]))
            print(f"results: {sorted(scores)} (the same under both schemes: {len(scores) == 1})")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--legacy-zygote"]:
        gc.disable()  # as grader.jail.zygote does when started as a program; its warm-up turns it back on
        _legacy_zygote(int(sys.argv[2]))
    else:
        main()
