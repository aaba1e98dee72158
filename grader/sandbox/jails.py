"""Where jails come from: the zygote that forks them, and whether this machine can isolate at the level
asked for (and what a weaker level cannot hide). The grader's side; grader.jail.zygote is the zygote's own,
and grader.jail.filesystem decides what a jail's root holds."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

from grader.errors import SandboxError, SandboxUnavailable
from grader.jail.limits import Limits

from . import procfs, slots
from .cpus import allowed
from .launch import launch_zygote

PROJECT_ROOT = str(Path(__file__).resolve().parents[2])
# No list of places to hide: at the namespaces level the jail's root is built from what its interpreter
# uses (grader.jail.filesystem.plan_root), so the project, home folders, /run, /srv, a second copy of the
# course in /opt are simply not in it. At the rlimits level nothing can be hidden (NOT_HIDDEN says so).
NOT_HIDDEN = {
    "rlimits": "--isolation rlimits hides no file: student code can read whatever its user can read "
    "on this machine (a sandbox uid 60000+ as root, your own user otherwise), such as a copy "
    "of the course's reference or other submissions, and it can use the network"
}


def what_it_cannot_hide(level: str) -> str | None:
    """What student code can see at isolation ``level`` that the namespaces level hides (None: nothing)."""
    return NOT_HIDDEN.get(level)


def _keep_paths() -> list[str]:
    """Python's own files, which the sandbox uid must be able to read at the rlimits level (a venv in the
    project)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    paths.update(
        p
        for p in sys.path
        if p
        and os.path.isdir(p)
        and not (p + "/").startswith(PROJECT_ROOT + "/")
        and not PROJECT_ROOT.startswith(p.rstrip("/") + "/")
    )
    venv = os.path.join(PROJECT_ROOT, ".venv")
    if os.path.isdir(venv):
        paths.add(venv)
    return sorted(os.path.realpath(p) for p in paths if p)


SANDBOX_UID = 60000  # the first of the uids student code runs as when seqgrade runs as root (one per slot)


def check_isolation(level: str, *, rootless: bool = False) -> None:
    """Raise SandboxUnavailable, saying why, when ``level`` cannot be provided on this machine.
    ``rootless`` asks for the path an ordinary user gets even when running as root (for tests)."""
    if not hasattr(os, "pidfd_open"):
        raise SandboxUnavailable("this Python lacks os.pidfd_open (Linux 5.3+ and Python 3.9+ are needed)")
    if level != "namespaces":
        # Without a mount namespace nothing is bound back in for the student's uid, so it reads Python's
        # files as any other user would; a student's `import` of a module the zygote did not load needs that.
        blocked = procfs.unreadable_for(SANDBOX_UID, _keep_paths()) if os.geteuid() == 0 and not rootless else None
        if blocked:
            raise SandboxUnavailable(
                f"--isolation rlimits runs student code as uid {SANDBOX_UID}+, which cannot read {blocked} "
                f"(Python's own files are inside it); install Python and the virtual environment where other "
                f"users can read them (e.g. /usr/local or /opt), or run seqgrade as an ordinary user"
            )
        return
    found = procfs.probe()
    if not found["namespaces"]:
        raise SandboxUnavailable(
            f"cannot create Linux namespaces here ({found['reason']}). Enable unprivileged user namespaces "
            f"(sysctl kernel.unprivileged_userns_clone=1) or run as root; or pass --isolation rlimits to accept "
            f"weaker isolation (no filesystem or network jail)"
        )


class Zygote:
    """One pre-loaded process that forks jails. Not thread-safe: use one per worker.

    ``shared``: the control socket (SOCK_SEQPACKET) of a zygote that another process started and owns (a
    batch's, serving all its workers): this one only asks it for jails; the owner waits for it to be ready
    and ends it."""

    def __init__(
        self,
        slot: int | None = None,
        hide: Sequence[str] = (),
        *,
        rootless: bool = False,
        launched=None,
        shared: socket.socket | None = None,
    ):
        # ``slot``: which uid its jails run as (SANDBOX_UID + slot, as root); by default one no other live
        # process holds (grader.sandbox.slots), given back when this closes
        self._claimed = slot is None
        self.slot, self.rootless = slots.claim() if slot is None else slot, rootless
        self.set_hidden(hide)
        if shared is not None:
            self.proc, self.control = None, shared
        else:
            self.proc, self.control = launched or launch_zygote()
        self._ready = shared is not None

    def set_hidden(self, hide: Sequence[str]) -> None:
        """Folders the student must not see (submissions, outputs). The jail's root has no place for them
        anyway; they are covered only where they lie inside a folder it binds (a virtual environment)."""
        self.hide = sorted({os.path.realpath(h) for h in hide})

    def wait_ready(self, timeout: float = 120.0) -> None:
        if self._ready:
            return
        self.control.settimeout(timeout)
        try:
            line = self.control.recv(64)
        except socket.timeout:
            line = b""
        if b"ready" not in line:
            err = self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.poll() is not None else ""
            raise SandboxError(f"the sandbox zygote did not start: {err or 'no answer'}")
        self._ready = True

    def spawn(self, limits: Limits) -> tuple[socket.socket, socket.socket]:
        self.wait_ready()
        data_ours, data_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        ctl_ours, ctl_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        uid = SANDBOX_UID + self.slot
        spec = {
            "limits": asdict(limits),
            "hide": self.hide,
            "uid": uid,
            "gid": uid,
            "rootless": self.rootless,
            "cpus": allowed() or None,
        }  # where the asking thread may run (grader.sandbox.cpus)
        self.control.settimeout(30)
        try:
            socket.send_fds(self.control, [json.dumps(spec).encode()], [data_theirs.fileno(), ctl_theirs.fileno()])
        except OSError as exc:  # the zygote has ended (the grader's failure, never the student's)
            data_ours.close()
            ctl_ours.close()
            raise SandboxError(f"the sandbox zygote is gone ({exc.strerror or exc})") from None
        finally:
            data_theirs.close()
            ctl_theirs.close()
        return data_ours, ctl_ours

    def gone(self) -> bool:
        """The zygote has closed its end of the control socket (it ended)."""
        poller = select.poll()
        poller.register(self.control, select.POLLHUP)
        return any(events & (select.POLLHUP | select.POLLERR) for _, events in poller.poll(0))

    def close(self) -> None:
        if self._claimed:
            slots.release(self.slot)
            self._claimed = False
        if self.proc is None:  # a shared zygote: its owner ends it, and the socket is the worker's
            return
        try:
            self.control.close()
        finally:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            if self.proc.stderr:
                self.proc.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
