"""One submission's jailed process, from the grader's side: start it from a zygote and run the notebook's cells
in it, wait for its messages under a CPU budget, an idle limit and a wall-clock backstop, and kill it.

Timeouts and crashes kill the whole jail (through a pidfd, so no pid can be mistaken) and the next start runs
the cells again, skipping any cell that hung or ended the process. :class:`grader.sandbox.client.Session`
calls into the process.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import time
from typing import Sequence, TypeVar

from grader.checking.calls import StudentCrashed, StudentTimeout
from grader.errors import ProtocolError, SandboxError
from grader.jail import framing
from grader.jail.limits import Limits

from . import procfs
from .budget import CallClock
from .ending import ENDING, await_ended
from .jails import Zygote

MAX_RESTARTS = 20

P = TypeVar("P", bound="JailProcess")


class JailProcess:
    """The jailed process that runs one submission's cells, started again after it hangs or crashes."""

    def __init__(self, zygote: Zygote, cells: Sequence[tuple[int, str]], limits: Limits, modules: Sequence[str] = ()):
        self.zygote, self.cells, self.limits, self.modules = zygote, list(cells), limits, list(modules)
        self.deadline = time.monotonic() + limits.submission_timeout_s
        self.skip: dict[int, dict] = {}  # cells not run again after they hung or ended the process
        self.cell_reports: dict[int, dict] = {}
        self.restarts = 0
        self.channel: framing.Channel | None = None  # the framed stream to the jail
        self.ctl = None
        self.pidfd: int | None = None
        self.pgid: int | None = None  # the jail's process group: without a PID namespace, killing S is not enough
        self.ready_mb = 0.0  # the jail's resident memory once its cells had run
        self._warmed: set[str] = set()  # callables whose first call has been made (one-time work allowed then)
        self._spare: tuple[socket.socket, socket.socket] | None = None  # a jail built ahead, for the next restart

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
            self.channel.send(
                {
                    "op": "run",
                    "modules": self.modules,
                    "cells": [[i, src] for i, src in self.cells if i not in self.skip],
                }
            )
        except OSError:  # the jail ended before it could read which cells to run
            self._never_started()
        current, clock, heard = None, CallClock(self.limits.cell_cpu_s, 0.0), False
        while True:
            # A running cell is stopped by its CPU budget, or once it has computed nothing for cell_timeout_s
            # (every thread asleep: it sleeps or waits); the notebook's time is its only wall-clock backstop,
            # so a cell that computes but waits for a CPU on a loaded machine is not cut short (in one full
            # parallel run of the tests, the corpus's memory-bomb cell, about 0.5 s of CPU and so far from its 2 s
            # budget, was stopped at the 10 s wall-clock limit cells had then).
            limit = float("inf") if current is not None else 10.0
            deadline = time.monotonic() + self._remaining(limit)
            try:
                if current is not None:
                    self._wait_readable(deadline, clock, idle=self.limits.cell_timeout_s)
                msg, _ = self.channel.recv(deadline)
            except framing.TimedOut:
                self._kill()
                if current is None:
                    raise StudentTimeout("the notebook's process stopped answering between cells")
                self.skip[current] = {
                    "index": current,
                    "status": "timeout",
                    "message": f"the cell ran too long and was stopped after {self.limits.cell_cpu_s:g} s "
                    f"of CPU time (or {self.limits.cell_timeout_s:g} s of waiting); later runs skip it",
                }
                return self._start()
            except (framing.Closed, ProtocolError):
                if not heard:
                    self._never_started()
                detail = self._exit_detail()
                self._kill()
                if current is None:
                    raise StudentCrashed(f"the notebook's process ended unexpectedly {detail}".strip())
                self.skip[current] = {
                    "index": current,
                    "status": "error",
                    "message": f"the cell ended the notebook's process ({detail or 'exit or crash'}); "
                    "later runs skip it",
                }
                return self._start()
            heard = True
            op = msg.get("op")
            if op == "cell_start":
                current = int(msg.get("index", -1))
                clock = CallClock(self.limits.cell_cpu_s, 0.0)
            elif op == "cell_done":
                index = int(msg.get("index", -1))
                self.cell_reports.setdefault(
                    index,
                    {
                        "index": index,
                        "status": str(msg.get("status"))[:10],
                        "message": str(msg.get("message", ""))[:500],
                    },
                )
                current = None
            elif op == "ready":
                # what the process holds once its cells have run: a call's memory grows from here (budget.CallClock)
                self.ready_mb = procfs.tree_usage(self.pgid).resident_mb if self.pgid else 0.0
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

    def open(self: P) -> P:
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

    def _wait_readable(
        self, deadline: float, clock: CallClock, watch=None, idle: float | None = None, spent=lambda: 0.0
    ) -> None:
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
                used, resident_mb = procfs.tree_usage(self.pgid)
                if clock.since_cpu is None:
                    clock.start(used)
                elif clock.over(used - clock.since_cpu + spent(), self.pgid, resident_mb - self.ready_mb):
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
