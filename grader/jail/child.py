"""The student's side: run the notebook's cells, then answer calls until the socket closes.

Runs inside the jail, after every privilege is gone. Everything it says is untrusted by the grader.
"""

from __future__ import annotations

import os
import socket
import threading

from . import execute, framing, invoke
from .errors import ProtocolError


def _only_the_original(pid: int) -> int:
    """Processes the student forked must not speak on the socket: they leave as soon as they return here.

    Threads the student left running would steal time from every later call (and make timeouts depend
    on load). A fork keeps only the calling thread, so the server continues in a fresh copy of itself
    and the old process, threads and all, exits. Returns the pid now serving."""
    if os.getpid() != pid:
        os._exit(0)
    if threading.active_count() > 1:
        if os.fork() != 0:
            os._exit(0)
        return os.getpid()
    return pid


def _asker(channel: framing.Channel) -> invoke.Ask:
    """Stand-ins ask the grader for each result over the same socket, in the middle of a call."""

    def ask(name: str, kind: str, args: list, cotangent):
        channel.send({"op": "helper", "name": name, "kind": kind}, {"args": args, "cotangent": cotangent})
        reply, values = channel.recv()
        if not reply.get("ok"):
            invoke.raise_helper_error(reply.get("error"))
        return values.get("value")

    return ask


def serve(sock: socket.socket) -> None:
    pid = os.getpid()
    channel = framing.Channel(sock)
    ask = _asker(channel)
    request, _ = channel.recv()
    ns = execute.fresh_namespace()
    modules = [str(m) for m in request.get("modules", [])[:16] if isinstance(m, str)]
    with execute.course_modules(modules):
        for index, source in request.get("cells", []):
            channel.send({"op": "cell_start", "index": index})
            report = execute.run_cell(int(index), str(source), ns)
            pid = _only_the_original(pid)
            channel.send({"op": "cell_done", **report})
    channel.send({"op": "ready"})
    while True:
        try:
            request, values = channel.recv()
        except framing.Closed:
            return
        except ProtocolError as exc:  # the whole frame was read, so the stream is still in step: say why
            channel.send(
                {
                    "ok": False,
                    "error": {
                        "type": "ProtocolError",
                        "where": "",
                        "message": f"the sandbox could not read the grader's request: {exc}",
                    },
                }
            )
            continue
        reply, reply_values = invoke.handle(ns, request, values, ask)
        pid = _only_the_original(pid)
        try:
            channel.send(reply, reply_values)
        except Exception as exc:  # a value the codec could not frame
            channel.send(
                {
                    "ok": False,
                    "error": {"type": type(exc).__name__, "message": "the result could not be sent", "where": ""},
                }
            )
