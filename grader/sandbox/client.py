"""The grader's side of the sandbox: start a zygote, open one session per submission, call into it.

A session runs the notebook's cells in a jailed process and then answers calls. Timeouts and crashes
kill the whole jail (through a pidfd, so no pid can be mistaken) and the next call starts it again,
skipping any cell that hung or ended the process, so one bad cell or function costs only its own checks.
"""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import time
from typing import Mapping, Sequence

from grader.checking.allowance import MIN_FRAME_BYTES, CallAllowance
from grader.checking.calls import (
    Reply,
    Served,
    StandInClass,
    StandInHandler,
    StudentCrashed,
    StudentMissing,
    StudentOverspent,
    StudentTimeout,
    build_request,
    overspent,
    serve_helper,
)
from grader.checking.objectcalls import ObjectCalls
from grader.errors import ProtocolError, SandboxError
from grader.jail import framing
from grader.jail.codec import encode_message
from grader.jail.limits import Limits

from . import procfs, remembered
from .ending import ENDING, await_ended
from .jails import PROJECT_ROOT, SANDBOX_UID, Zygote, check_isolation  # noqa: F401  (re-exported)
from .remembered import ANSWERS
from .replies import to_reply
from .warmup import CallClock, callable_key

MAX_RESTARTS = 20
MAX_HELPER_CALLS = 100_000  # stand-in calls answered within one call


class Session(ObjectCalls):
    """One submission's jailed process, seen through the StudentCode interface."""

    def __init__(self, zygote: Zygote, cells: Sequence[tuple[int, str]], limits: Limits, modules: Sequence[str] = (),
                 budgets: Mapping[str, float] | None = None):
        self.zygote, self.cells, self.limits, self.modules = zygote, list(cells), limits, list(modules)
        self.budgets = dict(budgets or {})  # function -> CPU seconds of one call, where it declares its own
        self.deadline = time.monotonic() + limits.submission_timeout_s
        self.skip: dict[int, dict] = {}  # cells not run again after they hung or ended the process
        self.cell_reports: dict[int, dict] = {}
        self.restarts = 0
        self.channel: framing.Channel | None = None  # the framed stream to the jail
        self.ctl = None
        self.pidfd: int | None = None
        self.pgid: int | None = None  # the jail's process group: without a PID namespace, killing S is not enough
        self._defines: dict[str, bool] = {}
        self._broken: dict[str, BaseException] = {}  # functions that hung or ended the process: not called again
        self._unbuildable: set[str] = set()  # student classes whose __init__ ended the process or hung as a stand-in
        self._warmed: set[str] = set()  # callables whose first call has been made (one-time work allowed then)
        self._spare: tuple[socket.socket, socket.socket] | None = None  # a jail built ahead, for the next restart

    # --- lifecycle ---------------------------------------------------------------------------------
    def _kill(self) -> None:
        """Kill the jail; the next jail of this zygote waits until it is gone before it runs any cell
        (grader.sandbox.ending)."""
        killed = self.pidfd is not None
        if self.pgid is not None and self.limits.isolation != "namespaces":
            try:
                os.killpg(self.pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.pgid = None
        if self.pidfd is not None:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.close(self.pidfd)
            self.pidfd = None
        if self.channel is not None:
            self.channel.close()
        if self.ctl is not None:
            if killed:
                ENDING.setdefault(self.zygote, []).append(self.ctl)
            else:
                self.ctl.close()
        self.channel = self.ctl = None

    def _exit_detail(self) -> str:
        """Why the jailed process ended, from the monitor (trusted), if it says within a moment."""
        if self.ctl is None:
            return ""
        self.ctl.settimeout(2.0)
        try:
            info = json.loads(self.ctl.recv(4096) or b"{}")
        except (OSError, ValueError):
            return ""
        code = info.get("exit_code")
        if isinstance(code, int) and code > 128:  # the jail's init passes on a worker's death by signal as 128 + n
            code = 128 - code
        if isinstance(code, int) and code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            hint = " (likely the memory or CPU limit)" if name in ("SIGKILL", "SIGXCPU", "SIGSEGV") else ""
            return f"killed by {name}{hint}"
        return f"exited with status {code}" if code is not None else ""

    def _handshake(self) -> None:
        """Receive the new jail's pidfd and process group from its monitor (trusted), or say why not."""
        self.ctl.settimeout(30)
        try:
            msg, fds, _, _ = socket.recv_fds(self.ctl, 4096, 1)
        except OSError as exc:
            raise SandboxError(f"the sandbox did not start: {exc}") from None
        if not fds:
            detail = ""
            try:
                detail = json.loads(msg).get("setup_error", "")
            except ValueError:
                pass
            raise SandboxError(f"the sandbox could not be set up: {detail[-1500:] or 'no answer'}")
        self.pidfd = fds[0]
        try:
            self.pgid = int(json.loads(msg).get("pid"))  # S leads a process group of its own (the monitor sets it)
        except (ValueError, TypeError, AttributeError):
            self.pgid = None

    def _remaining(self, limit: float) -> float:
        return min(limit, self.deadline - time.monotonic())

    def _start(self) -> None:
        if time.monotonic() >= self.deadline:
            raise StudentTimeout(f"the notebook used up its time budget of {self.limits.submission_timeout_s:g} s")
        if self.restarts > MAX_RESTARTS:
            raise StudentCrashed("the notebook's process had to be restarted too often; remaining checks were not run")
        self.restarts += 1
        self._warmed.clear()  # a new process: every function's first call may load code again
        if self._spare is not None:
            (sock, self.ctl), self._spare = self._spare, None
        else:
            sock, self.ctl = self.zygote.spawn(self.limits)
        self.channel = framing.Channel(sock)
        self._handshake()
        await_ended(self.zygote)
        try:
            self.channel.send({"op": "run", "modules": self.modules,
                               "cells": [[i, src] for i, src in self.cells if i not in self.skip]})
        except OSError:  # the jail ended before it could read which cells to run
            self._never_started()
        current, clock, heard = None, CallClock(self.limits.cell_cpu_s, 0.0), False
        while True:
            limit = self.limits.cell_timeout_s if current is not None else 10.0
            deadline = time.monotonic() + self._remaining(limit)
            try:
                if current is not None:
                    self._wait_readable(deadline, clock)
                msg, _ = self.channel.recv(deadline)
            except framing.TimedOut:
                self._kill()
                if current is None:
                    raise StudentTimeout("the notebook's process stopped answering between cells")
                self.skip[current] = {"index": current, "status": "timeout",
                                      "message": f"the cell ran too long and was stopped after {self.limits.cell_cpu_s:g} s "
                                                 f"of CPU time (or {self.limits.cell_timeout_s:g} s of waiting); later runs skip it"}
                return self._start()
            except (framing.Closed, ProtocolError):
                if not heard:
                    self._never_started()
                detail = self._exit_detail()
                self._kill()
                if current is None:
                    raise StudentCrashed(f"the notebook's process ended unexpectedly {detail}".strip())
                self.skip[current] = {"index": current, "status": "error",
                                      "message": f"the cell ended the notebook's process ({detail or 'exit or crash'}); later runs skip it"}
                return self._start()
            heard = True
            op = msg.get("op")
            if op == "cell_start":
                current = int(msg.get("index", -1))
                clock = CallClock(self.limits.cell_cpu_s, 0.0)
            elif op == "cell_done":
                index = int(msg.get("index", -1))
                self.cell_reports.setdefault(index, {"index": index, "status": str(msg.get("status"))[:10],
                                                     "message": str(msg.get("message", ""))[:500]})
                current = None
            elif op == "ready":
                if self.restarts > 1 and self._spare is None:
                    # This notebook has hung or crashed once already: the next jail is built now, beside
                    # the calls (its cells run only when it is needed, so their CPU time is measured).
                    self._spare = self.zygote.spawn(self.limits)
                return
            else:
                self._kill()
                raise StudentCrashed("the notebook's process sent something unexpected while its cells ran")

    def _never_started(self) -> None:
        """The jail ended before its first message, so before any student code ran: the sandbox failed, not
        the notebook (the grader's own failure: a batch records it and never charges the student)."""
        detail = self._exit_detail()
        self._kill()
        raise SandboxError(f"the sandbox ended before it ran the notebook's cells ({detail or 'no exit status'})")

    def open(self) -> "Session":
        self._start()
        return self

    def reports(self) -> list[dict]:
        merged = {**self.cell_reports, **self.skip}
        return [merged[i] for i in sorted(merged)]

    def close(self) -> None:
        self._kill()
        if self._spare is not None:  # ended the way a used jail is: killed through its pidfd
            (sock, self.ctl), self._spare = self._spare, None
            self.channel = framing.Channel(sock)
            try:
                self._handshake()
            except SandboxError:
                pass
            self._kill()

    # --- StudentCode --------------------------------------------------------------------------------
    def _request(self, request: dict, values: dict, name: str, stand_ins: Mapping[str, StandInHandler] | None = None,
                 log: list[Served] | None = None, watch=None, clock: CallClock | None = None) -> tuple[dict, dict]:
        """Send one request and wait for its reply, answering the stand-in calls the student's code makes
        meanwhile. What the grader spends on them is bounded and counts towards the call's CPU time
        (grader.checking.allowance). ``clock``: the call's CPU budget (by default the function's, never stretched)."""
        if self.channel is None:
            self._start()
        deadline = time.monotonic() + self._remaining(self.limits.call_timeout_s)
        clock = clock or CallClock(self._budget(name, watch), 0.0)
        allowance = CallAllowance.for_call(values.get("args") or [], clock.budget)
        max_bytes = allowance.max_frame_bytes if request.get("op") == "call" else MIN_FRAME_BYTES
        log = log if log is not None else []
        try:
            self.channel.send(request, values)
            for _ in range(MAX_HELPER_CALLS):
                self._wait_readable(deadline, clock, watch, idle=self.limits.call_idle_s, spent=lambda: allowance.spent_s)
                n_header, frame = self.channel.recv_frame(deadline, max_bytes)
                key = remembered.digest(frame) if stand_ins and remembered.is_request(frame) else None
                # the same request, answered by this very stand-in before (grader.sandbox.remembered)
                answer = ANSWERS.replay(key, stand_ins, allowance, log) if key is not None else None
                if answer is None:
                    message, reply_values = framing.decode(n_header, frame)
                    if message.get("op") != "helper":
                        return message, reply_values
                    done: dict = {}
                    answer = encode_message(*serve_helper(stand_ins or {}, message, reply_values, log, allowance, done))
                    if key is not None:
                        ANSWERS.remember(key, str(message.get("name")), done, answer)
                if allowance.spent_s > clock.budget:
                    raise framing.TimedOut()
                self.channel.send_frame(answer)
            self._kill()
            raise StudentTimeout(f"{name} called other functions more than {MAX_HELPER_CALLS} times in one call; it was stopped")
        except framing.TimedOut:
            self._kill()
            if time.monotonic() >= self.deadline:
                raise StudentTimeout(f"the notebook used up its time budget of {self.limits.submission_timeout_s:g} s") from None
            # The same words whichever limit stopped it, so the feedback does not depend on the machine's load.
            raise StudentTimeout(f"{name} did not return: it was stopped after {clock.budget:g} s of CPU "
                                 f"time (or after waiting {self.limits.call_idle_s:g} s without computing)") from None
        except framing.TooLarge as exc:
            self._kill()
            raise overspent(name, f"its process sent {exc.size / 2**20:.0f} MiB at once, more than the "
                                  f"{max_bytes / 2**20:.0f} MiB allowed for a call on these inputs") from None
        except StudentOverspent as exc:
            self._kill()
            raise overspent(name, exc.message) from None
        except (framing.Closed, ProtocolError, OSError) as exc:
            detail = self._exit_detail() if not isinstance(exc, ProtocolError) else "it sent a malformed reply"
            self._kill()
            raise StudentCrashed(f"calling {name} ended the notebook's process ({detail or 'exit or crash'})") from None

    def _budget(self, name: str, watch=None) -> float:
        return self.limits.large_call_cpu_s if watch is not None else self.limits.call_budget(self.budgets.get(name))

    def _wait_readable(self, deadline: float, clock: CallClock, watch=None, idle: float | None = None,
                       spent=lambda: 0.0) -> None:
        """Wait until the next message starts to arrive; raise framing.TimedOut once the sandbox has used
        ``clock``'s CPU budget (read from /proc, outside the sandbox), once it has computed nothing for
        ``idle`` seconds (every thread asleep and no CPU time added: it sleeps or waits for what never
        comes), or when the wall-clock backstop ``deadline`` has passed. The budget counts from the CPU
        time read when a wait outlasts its first 5 ms (most calls answer sooner, and then /proc is never
        read), so at most those 5 ms go uncounted. ``spent()``: CPU seconds the grader spent on the call's
        behalf (stand-in replies), counted too."""
        step = 0.005
        last_used, quiet_since = None, time.monotonic()
        while True:
            wait = min(step, deadline - time.monotonic())
            if wait <= 0:
                raise framing.TimedOut()
            if self.channel.pending() or select.select([self.channel], [], [], wait)[0]:
                return
            if watch is not None:
                watch.sample()
            if self.pgid:
                used = procfs.tree_cpu_seconds(self.pgid)
                if clock.since_cpu is None:
                    clock.start(used)
                elif clock.over(used - clock.since_cpu + spent(), self.pgid):
                    raise framing.TimedOut()
                if idle is not None:
                    now = time.monotonic()
                    if used != last_used or procfs.tree_busy(self.pgid):
                        last_used, quiet_since = used, now
                    elif now - quiet_since > idle:
                        raise framing.TimedOut()
            # A memory watch samples often; otherwise the poll stays well below the budget, so a hung call
            # is stopped close to its budget rather than up to one long poll later.
            step = min(step * 2, 0.01 if watch is not None else min(0.05, clock.budget / 10))

    def _call_once(self, name, request, args, cotangent, stand_ins, measure_memory, clock):
        log: list[Served] = []
        peak = procfs.PeakMemory(self.pgid) if measure_memory and self.pgid else None
        reply = self._request(request, {"args": list(args), "cotangent": cotangent}, name, stand_ins, log, peak, clock)
        return log, peak, reply

    def defines(self, name: str) -> bool:
        if name not in self._defines:
            self._defines[name] = bool(self._request({"op": "defines", "name": name}, {}, name)[0].get("defines"))
        return self._defines[name]

    def get(self, name: str):
        return to_reply(name, *self._request({"op": "get", "name": name}, {}, name)).value

    def call(self, name: str, args: Sequence, *, grad_wrt: Sequence[int] = (), cotangent=None, again: bool = False,
             stand_ins: Mapping[str, StandInHandler] | None = None, measure_memory: bool = False,
             op: str = "call", handle: str | None = None, method: str | None = None,
             classes: Mapping[str, StandInClass] | None = None, grad_params: bool = False,
             prepare: Mapping | None = None) -> Reply:
        """Call student function ``name`` (or, with ``handle``, a method of an object constructed earlier;
        ``op="construct"`` constructs class ``name`` under ``handle``; see grader.sandbox.objectcalls).

        A construction with stand-in classes that hangs or ends the process is tried once more with those
        classes laid out by the grader alone (without the student's ``__init__``): when that one succeeds,
        the student's helper class was at fault, and it costs only its own exercise (it stays laid out alone
        for the rest of the submission)."""
        helpers = [] if op != "construct" or name in self._broken else sorted(
            n for c in (classes or {}).values() for n in c.names() if n not in self._unbuildable and self.defines(n))
        options = dict(grad_wrt=grad_wrt, cotangent=cotangent, again=again, stand_ins=stand_ins, op=op,
                       measure_memory=measure_memory, handle=handle, method=method, classes=classes,
                       grad_params=grad_params, prepare=prepare)
        try:
            return self._call(name, args, **options)
        except (StudentTimeout, StudentCrashed) as exc:
            if not helpers or time.monotonic() >= self.deadline:
                raise
            self._unbuildable.update(helpers)
            self._broken.pop(name, None)  # the same construction, now without the student's helper classes
            try:
                reply = self._call(name, args, **options)
            except (StudentTimeout, StudentCrashed, StudentOverspent):
                self._unbuildable.difference_update(helpers)  # its own fault: the helpers are not blamed
                raise exc from None
            return reply

    def _call(self, name: str, args: Sequence, *, grad_wrt, cotangent, again, stand_ins, measure_memory, op, handle,
              method, classes, grad_params, prepare) -> Reply:
        if name in self._broken:
            first = self._broken[name]
            raise type(first)(f"{first.message} (in an earlier check, so it was not called again)")
        if (handle is None or op == "construct") and not self.defines(name):
            raise StudentMissing(name)
        request, args, handlers = build_request(op, name, args, grad_wrt=grad_wrt, again=again, stand_ins=stand_ins,
                                                handle=handle, method=method, classes=classes, grad_params=grad_params,
                                                prepare=prepare, layout_only=sorted(self._unbuildable))
        try:
            if self.channel is None:
                self._start()
            warm_key = callable_key(name, op, handle, method)  # each function, construction and method
            first = warm_key not in self._warmed
            self._warmed.add(warm_key)
            clock = CallClock(self._budget(name, measure_memory or None),
                              self.limits.warmup_cpu_s if first else 0.0).arm(self.pgid)
            log, peak, reply = self._call_once(name, request, args, cotangent, handlers, measure_memory, clock)
            if clock.stretched:  # it loaded code on this first call: judged on a second call, warm
                log, peak, reply = self._call_once(name, request, args, cotangent, handlers, measure_memory, None)
            return to_reply(name, *reply, log, peak.stop() if peak else None)
        except (StudentTimeout, StudentCrashed, StudentOverspent) as exc:
            if time.monotonic() < self.deadline:
                self._broken.setdefault(name, exc)
            raise

