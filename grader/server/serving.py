"""The grading server's own side: one warm grader answering ``seqgrade grade`` over the socket that
grader.server finds and checks (see its docstring for who may talk to whom)."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path
from typing import Callable

from grader.errors import SandboxError, SandboxUnavailable, SeqgradeError, ServerError, UsageError
from grader.jail.limits import Limits
from grader.version import __version__

from . import (
    IDLE_EXIT_S,
    MAX_REQUEST,
    PROTOCOL,
    REQUEST_READ_S,
    _receive,
    _send,
    address,
    code_identity,
    peer_uid,
    private_folder,
    status,
)


# --- the server ---------------------------------------------------------------------------------------
class _Stop(Exception):
    pass


def _limits_of(data) -> Limits:
    if not isinstance(data, dict):
        raise UsageError("limits must be a JSON object")
    try:
        return Limits(**data)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"bad limits: {exc}") from None


class _Server:
    """One grader (one zygote, which serves any limits), answering one client at a time."""

    def __init__(self, isolation: str):
        from grader.collector import imports_uncollected

        with imports_uncollected():
            import torch

            from grader.grading import Grader  # and torch, numpy, the checks
        torch.set_num_threads(
            1
        )  # as a cold `seqgrade grade` and a batch worker: one thread, which its jail takes turns with
        self._grader_class = Grader
        self.identity = code_identity()
        self.since = time.time()
        self.graded = 0
        self.limits = Limits(isolation=isolation)
        self._grader = None
        self.grader().wait_ready()  # a client that finds the socket finds a warm grader

    def grader(self):
        if self._grader is None:
            self._grader = self._grader_class(self.limits)
        return self._grader

    def close(self) -> None:
        if self._grader is not None:
            self._grader.close()
            self._grader = None

    def answer(self, request: dict) -> dict:
        if request.get("protocol") != PROTOCOL:
            return {"error": {"kind": "protocol", "message": f"this server speaks protocol {PROTOCOL}"}}
        op = request.get("op")
        if op == "status":
            return {
                "pid": os.getpid(),
                "since": self.since,
                "graded": self.graded,
                "identity": self.identity,
                "version": __version__,
            }
        if op == "stop":
            raise _Stop()
        if op != "grade":
            return {"error": {"kind": "protocol", "message": f"unknown op {op!r}"}}
        if request.get("identity") != self.identity:
            return {"error": {"kind": "stale", "message": "this server runs other code"}}
        notebook, assignment = request.get("notebook"), request.get("assignment")
        if (
            not isinstance(notebook, str)
            or not os.path.isabs(notebook)
            or not (assignment is None or isinstance(assignment, str))
        ):
            return {"error": {"kind": "protocol", "message": "notebook must be an absolute path, assignment a string"}}
        try:
            result = self.grader().grade(notebook, assignment, limits=_limits_of(request.get("limits")))
        except UsageError as exc:
            return {"error": {"kind": "usage", "message": str(exc)}}
        except SandboxUnavailable as exc:  # the isolation this request asked for: the server's own still works
            return {"error": {"kind": "sandbox_unavailable", "message": str(exc)}}
        except SandboxError as exc:
            self.close()  # the next request starts a fresh zygote
            return {"error": {"kind": "sandbox", "message": str(exc)}}
        except SeqgradeError as exc:
            return {"error": {"kind": "error", "message": str(exc)}}
        except Exception as exc:  # the grader's own bug: this request fails, the server goes on
            return {"error": {"kind": "internal", "message": f"{type(exc).__name__}: {exc}"}}
        self.graded += 1
        return {"result": result.to_dict()}


def _exit_quietly(*_) -> None:
    raise SystemExit(0)  # through serve's finally: the zygote is killed and the socket removed


def serve(
    idle_exit_s: float = IDLE_EXIT_S, on_ready: Callable[[Path], None] | None = None, *, isolation: str = "namespaces"
) -> int:
    """Serve until stopped, or until ``idle_exit_s`` pass without a request; the number of notebooks graded.
    ``isolation``: the level its grader starts with (a request for another is checked when it comes)."""
    where = address()
    if where is None:
        raise ServerError("the grading server is turned off here (SEQGRADE_SERVER=off, or no Unix socket peer check)")
    private_folder(where.parent, create=True)
    if status() is not None:
        raise ServerError(f"a grading server is already running at {where} (seqgrade serve --status)")
    server = _Server(isolation)
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bound = None
    previous = signal.signal(signal.SIGTERM, _exit_quietly)
    try:
        try:
            where.unlink()  # a stale socket of a server that was killed
        except FileNotFoundError:
            pass
        listening.bind(str(where))
        bound = os.stat(where).st_ino
        os.chmod(where, 0o600)
        listening.listen(16)
        listening.settimeout(idle_exit_s)
        if on_ready is not None:
            on_ready(where)
        while True:
            try:
                conn, _ = listening.accept()
            except socket.timeout:
                break
            try:
                if not _serve_one(server, conn):
                    break
            finally:
                conn.close()
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.close()
        try:
            if bound is not None and os.stat(where).st_ino == bound:  # still ours, not a later server's
                where.unlink()
        except OSError:
            pass
        listening.close()
    return server.graded


def _serve_one(server: _Server, conn: socket.socket) -> bool:
    """Answer one connection; False when asked to stop."""
    if peer_uid(conn) != os.getuid():
        return True  # not our user: no answer at all
    conn.settimeout(REQUEST_READ_S)
    try:
        with conn.makefile("rb") as stream:
            request = _receive(stream, MAX_REQUEST)
    except (OSError, ValueError):
        return True
    conn.settimeout(None)
    try:
        reply = server.answer(request)
    except _Stop:
        _try_send(conn, {"stopped": True})
        return False
    _try_send(conn, reply)
    return True


def _try_send(conn: socket.socket, message: dict) -> None:
    try:
        _send(conn, message)
    except OSError:  # the client went away: its loss, not the server's
        pass
