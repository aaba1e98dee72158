"""The grading server: one warm grader that ``seqgrade grade`` hands its notebook to.

A cold ``seqgrade grade`` spends most of its time starting: torch is imported here and, at the same
time, in the sandbox's zygote (1-2 s on a 2-core machine), before half a second of grading. A
student who grades after every change, or a TA who regrades one notebook, pays that start each time.
``seqgrade serve`` pays it once and keeps the grader, its zygote and the drawn examples in memory;
``seqgrade grade`` finds it through a Unix socket, sends the notebook's path, the assignment and the
limits, and gets back the result a cold run would have computed: the server grades with the same
``Grader`` and the same limits, and sends the result's own JSON.

Only the server's user can reach it, and the client only believes a server of its own user:
  - the socket lives in a folder the user owns with no access for anyone else (checked, not
    assumed, on both sides: another user could create the folder first in a shared /tmp);
  - each side asks the kernel who the other is (SO_PEERCRED) and talks only to its own uid;
  - the server answers only clients that run the very same code (a digest of grader/ and
    reference/ and the library versions); a client of other code grades by itself.
Student code never gets near the socket: the jail hides the folder (and, without namespaces, runs as
another uid), and results are computed by the server, never by the sandbox.

Messages are one JSON object per line, versioned (``protocol``). Everything here uses the
standard library only, so a client never imports torch; the server itself is grader.server.serving.
"""

from __future__ import annotations

import hashlib
import json
import os
import site
import socket
import stat
import struct
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from grader.errors import SandboxError, SandboxUnavailable, ServerError, UsageError
from grader.fsutil import source_digest
from grader.jail.limits import Limits
from grader.version import __version__

PROTOCOL = 1
MAX_REQUEST = 1 << 16
MAX_REPLY = 1 << 26
REQUEST_READ_S = 10.0  # a client has this long to send its request once connected
IDLE_EXIT_S = 3600.0
_PROJECT = Path(__file__).resolve().parents[2]


# --- where the server is, and whether to believe it ---------------------------------------------
def address() -> Path | None:
    """The server's socket: ``$SEQGRADE_SERVER`` (a path, or ``off``), else ``seqgrade-UID/grade.sock``
    under ``$XDG_RUNTIME_DIR`` or the temporary folder. None when turned off or where there is no
    Unix socket peer check (the sandbox needs Linux anyway)."""
    chosen = os.environ.get("SEQGRADE_SERVER")
    if chosen == "off" or not hasattr(socket, "SO_PEERCRED"):
        return None
    if chosen:
        return Path(chosen)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = runtime if runtime and os.path.isdir(runtime) else tempfile.gettempdir()
    return Path(base) / f"seqgrade-{os.getuid()}" / "grade.sock"


def private_folder(folder: Path, *, create: bool) -> None:
    """Check that ``folder`` is a real folder of ours that nobody else may enter; raise ServerError if not."""
    if create:
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise ServerError(f"cannot create the server's folder {folder}: {exc.strerror or exc}") from None
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        raise ServerError(f"{folder} does not exist") from None
    if not stat.S_ISDIR(info.st_mode):
        raise ServerError(f"{folder} is not a folder (a link or a file is there)")
    if info.st_uid != os.getuid():
        raise ServerError(f"{folder} belongs to uid {info.st_uid}, not to you (uid {os.getuid()})")
    if info.st_mode & 0o077:
        raise ServerError(
            f"{folder} can be entered by other users (mode {stat.S_IMODE(info.st_mode):o}); it must be 700"
        )


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected Unix socket, from the kernel."""
    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return uid


def _installed() -> list[str]:
    """The installed distributions, as their metadata folders name them (``torch-2.13.0.dist-info``):
    one listing per site-packages folder (the same whatever the working folder), far cheaper than
    asking importlib.metadata for each version."""
    found = []
    for folder in [*site.getsitepackages(), site.getusersitepackages()]:
        try:
            found += sorted(n for n in os.listdir(folder) if n.endswith((".dist-info", ".egg-info")))
        except OSError:
            pass
    return found


def code_identity() -> str:
    """A digest of the code that computes a grade: seqgrade's source, the interpreter, every installed
    library's version (an upgrade of torch under a running server makes it other code)."""
    h = hashlib.sha256(f"{PROTOCOL} {__version__} {sys.executable} {sys.version}".encode())
    h.update("\0".join(_installed()).encode())
    h.update(source_digest(_PROJECT, ("grader", "reference")).encode())
    return h.hexdigest()[:24]


# --- the line protocol ------------------------------------------------------------------------------
def _send(sock: socket.socket, message: dict) -> None:
    sock.sendall(json.dumps(message, allow_nan=False).encode() + b"\n")


def _receive(stream, limit: int) -> dict:
    line = stream.readline(limit + 1)
    if not line.endswith(b"\n"):
        raise ValueError("no complete message" if len(line) <= limit else "message too long")
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("a message must be a JSON object")
    return message


# --- the client ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Remote:
    """What asking the server gave: the result as a dict, or None and why to grade here ("" when no
    server is running, which needs no mention)."""

    result: dict | None
    note: str = ""


_ERRORS = {"usage": UsageError, "sandbox_unavailable": SandboxUnavailable, "sandbox": SandboxError}


def _trusted_socket(where: Path) -> bool:
    """A socket file is there, in a folder only we can enter."""
    try:
        private_folder(where.parent, create=False)
        return stat.S_ISSOCK(os.lstat(where).st_mode)
    except (ServerError, OSError):
        return False  # no folder or socket: no server; a folder we cannot trust: a server we must not believe


def _ask(where: Path, request: dict, timeout: float) -> dict | None:
    """Send one request to the server at ``where``; its reply, or None when no server of ours is there."""
    if not _trusted_socket(where):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(2.0)
        try:
            sock.connect(str(where))
        except OSError:
            return None  # no socket, or a stale one left by a server that was killed
        if peer_uid(sock) != os.getuid():
            return None
        sock.settimeout(timeout)
        _send(sock, {"protocol": PROTOCOL, **request})
        with sock.makefile("rb") as stream:
            return _receive(stream, MAX_REPLY)
    finally:
        sock.close()


def grade_remotely(notebook: Path, assignment: str | None, limits: Limits) -> Remote:
    """Have a running server grade ``notebook``. Errors the server reports that a cold run would raise
    too (a usage or sandbox error) are raised here; anything else means: grade here, with the note."""
    where = address()
    if where is None or not _trusted_socket(where):
        return Remote(None)
    request = {
        "op": "grade",
        "identity": code_identity(),
        "notebook": str(Path(notebook).resolve()),
        "assignment": assignment,
        "limits": asdict(limits),
    }
    try:
        reply = _ask(where, request, timeout=limits.submission_timeout_s + 60.0)
    except (OSError, ValueError) as exc:  # the server went away or sent nonsense mid-request
        return Remote(
            None, f"the grading server at {where} did not answer ({exc or type(exc).__name__}); graded here instead"
        )
    if reply is None:
        return Remote(None)
    if isinstance(reply.get("result"), dict):
        return Remote(reply["result"])
    error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
    kind, message = error.get("kind"), str(error.get("message", ""))
    if kind in _ERRORS:
        raise _ERRORS[kind](message)
    if kind == "stale":
        return Remote(
            None,
            f"the grading server at {where} runs other code than this seqgrade (it started "
            f"before seqgrade changed); graded here instead. Restart it: "
            f"seqgrade serve --stop; seqgrade serve --detach",
        )
    return Remote(
        None, f"the grading server at {where} could not grade it ({message or 'no reason given'}); graded here instead"
    )


def _ask_running(op: str, timeout: float) -> tuple[Path | None, dict | None]:
    """Where the server would be, and its reply to ``op`` (None when none of ours answers)."""
    where = address()
    if where is None:
        return None, None
    try:
        return where, _ask(where, {"op": op}, timeout=timeout)
    except (OSError, ValueError):
        return where, None


def status() -> dict | None:
    """The running server's pid, start time, count of graded notebooks and whether it runs this code."""
    where, reply = _ask_running("status", timeout=10.0)
    if reply is None or not isinstance(reply.get("pid"), int):
        return None
    return {**reply, "address": str(where), "current": reply.get("identity") == code_identity()}


def stop() -> bool:
    """Ask the running server to stop; True when one did."""
    _, reply = _ask_running("stop", timeout=30.0)
    return bool(reply and reply.get("stopped"))


def start_detached(idle_exit_s: float, isolation: str = "namespaces", wait_s: float = 300.0) -> dict:
    """Start ``seqgrade serve`` in the background and wait until it answers; its status."""
    import subprocess

    where = address()
    if where is None:
        raise ServerError("the grading server is turned off here (SEQGRADE_SERVER=off, or no Unix socket peer check)")
    private_folder(where.parent, create=True)
    log = where.parent / "server.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "grader.cli", "serve", "--idle-exit", str(idle_exit_s), "--isolation", isolation],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            cwd="/",
        )
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        found = status()
        if found is not None and found["pid"] == proc.pid:
            return found
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-1500:].strip()
            raise ServerError(f"the grading server did not start: {tail or f'it exited with status {proc.returncode}'}")
        time.sleep(0.1)
    proc.kill()
    raise ServerError(f"the grading server did not answer within {wait_s:g} s (log: {log})")
