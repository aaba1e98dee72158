"""The grader's side of the sandbox: start a zygote, open one session per submission, call into it.

A session runs the notebook's cells in a jailed process (grader.sandbox.process) and then answers calls.
Timeouts and crashes kill the whole jail (through a pidfd, so no pid can be mistaken) and the next call starts
it again, skipping any cell that hung or ended the process, so one bad cell or function costs only its own checks.
"""

from __future__ import annotations

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
from grader.errors import ProtocolError
from grader.jail import framing
from grader.jail.codec import encode_message
from grader.jail.limits import Limits

from . import procfs, remembered
from .budget import CallClock
from .jails import PROJECT_ROOT, SANDBOX_UID, Zygote, check_isolation  # noqa: F401  (re-exported)
from .process import JailProcess
from .remembered import ANSWERS
from .replies import to_reply
from .warmup import callable_key

MAX_HELPER_CALLS = 100_000  # stand-in calls answered within one call


class Session(JailProcess, ObjectCalls):
    """One submission's jailed process, seen through the StudentCode interface."""

    def __init__(
        self,
        zygote: Zygote,
        cells: Sequence[tuple[int, str]],
        limits: Limits,
        modules: Sequence[str] = (),
        budgets: Mapping[str, float] | None = None,
    ):
        super().__init__(zygote, cells, limits, modules)
        self.budgets = dict(budgets or {})  # function -> CPU seconds of one call, where it declares its own
        self._defines: dict[str, bool] = {}
        self._broken: dict[str, BaseException] = {}  # functions that hung or ended the process: not called again
        self._unbuildable: set[str] = set()  # student classes whose __init__ ended the process or hung as a stand-in

    # --- StudentCode --------------------------------------------------------------------------------
    def _request(
        self,
        request: dict,
        values: dict,
        name: str,
        stand_ins: Mapping[str, StandInHandler] | None = None,
        log: list[Served] | None = None,
        watch=None,
        clock: CallClock | None = None,
    ) -> tuple[dict, dict]:
        """Send one request and wait for its reply, answering the stand-in calls the student's code makes
        meanwhile. What the grader spends on them is bounded and counts towards the call's CPU time
        (grader.checking.allowance). ``clock``: the call's CPU budget (by default the function's, never stretched)."""
        if self.channel is None:
            self._start()
        deadline = time.monotonic() + self._remaining(self.limits.call_timeout_s)
        clock = clock or CallClock(self._budget(name, watch), 0.0, self.limits.hoard_cpu_s)
        allowance = CallAllowance.for_call(values.get("args") or [], clock.budget)
        max_bytes = allowance.max_frame_bytes if request.get("op") == "call" else MIN_FRAME_BYTES
        log = log if log is not None else []
        try:
            self.channel.send(request, values)
            for _ in range(MAX_HELPER_CALLS):
                self._wait_readable(
                    deadline, clock, watch, idle=self.limits.call_idle_s, spent=lambda: allowance.spent_s
                )
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
            raise StudentTimeout(
                f"{name} called other functions more than {MAX_HELPER_CALLS} times in one call; it was stopped"
            )
        except framing.TimedOut:
            self._kill()
            if time.monotonic() >= self.deadline:
                raise StudentTimeout(
                    f"the notebook used up its time budget of {self.limits.submission_timeout_s:g} s"
                ) from None
            # The same words whichever limit stopped it, so the feedback does not depend on the machine's load.
            raise StudentTimeout(
                f"{name} did not return: it was stopped after {clock.budget:g} s of CPU "
                f"time (or after waiting {self.limits.call_idle_s:g} s without computing)"
            ) from None
        except framing.TooLarge as exc:
            self._kill()
            raise overspent(
                name,
                f"its process sent {exc.size / 2**20:.0f} MiB at once, more than the "
                f"{max_bytes / 2**20:.0f} MiB allowed for a call on these inputs",
            ) from None
        except StudentOverspent as exc:
            self._kill()
            raise overspent(name, exc.message) from None
        except (framing.Closed, ProtocolError, OSError) as exc:
            detail = self._exit_detail() if not isinstance(exc, ProtocolError) else "it sent a malformed reply"
            self._kill()
            raise StudentCrashed(f"calling {name} ended the notebook's process ({detail or 'exit or crash'})") from None

    def _budget(self, name: str, watch=None) -> float:
        return self.limits.large_call_cpu_s if watch is not None else self.limits.call_budget(self.budgets.get(name))

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

    def call(
        self,
        name: str,
        args: Sequence,
        *,
        grad_wrt: Sequence[int] = (),
        cotangent=None,
        again: bool = False,
        stand_ins: Mapping[str, StandInHandler] | None = None,
        measure_memory: bool = False,
        op: str = "call",
        handle: str | None = None,
        method: str | None = None,
        classes: Mapping[str, StandInClass] | None = None,
        grad_params: bool = False,
        prepare: Mapping | None = None,
    ) -> Reply:
        """Call student function ``name`` (or, with ``handle``, a method of an object constructed earlier;
        ``op="construct"`` constructs class ``name`` under ``handle``; see grader.sandbox.objectcalls).

        A construction with stand-in classes that hangs or ends the process is tried once more with those
        classes laid out by the grader alone (without the student's ``__init__``): when that one succeeds,
        the student's helper class was at fault, and it costs only its own exercise (it stays laid out alone
        for the rest of the submission)."""
        helpers = (
            []
            if op != "construct" or name in self._broken
            else sorted(
                n for c in (classes or {}).values() for n in c.names() if n not in self._unbuildable and self.defines(n)
            )
        )
        options = dict(
            grad_wrt=grad_wrt,
            cotangent=cotangent,
            again=again,
            stand_ins=stand_ins,
            op=op,
            measure_memory=measure_memory,
            handle=handle,
            method=method,
            classes=classes,
            grad_params=grad_params,
            prepare=prepare,
        )
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

    def _call(
        self,
        name: str,
        args: Sequence,
        *,
        grad_wrt,
        cotangent,
        again,
        stand_ins,
        measure_memory,
        op,
        handle,
        method,
        classes,
        grad_params,
        prepare,
    ) -> Reply:
        if name in self._broken:
            first = self._broken[name]
            raise type(first)(f"{first.message} (in an earlier check, so it was not called again)")
        if (handle is None or op == "construct") and not self.defines(name):
            raise StudentMissing(name)
        request, args, handlers = build_request(
            op,
            name,
            args,
            grad_wrt=grad_wrt,
            again=again,
            stand_ins=stand_ins,
            handle=handle,
            method=method,
            classes=classes,
            grad_params=grad_params,
            prepare=prepare,
            layout_only=sorted(self._unbuildable),
        )
        try:
            if self.channel is None:
                self._start()
            warm_key = callable_key(name, op, handle, method)  # each function, construction and method
            first = warm_key not in self._warmed
            self._warmed.add(warm_key)
            clock = CallClock(
                self._budget(name, measure_memory or None),
                self.limits.warmup_cpu_s if first else 0.0,
                self.limits.hoard_cpu_s,
            ).arm(self.pgid)
            log, peak, reply = self._call_once(name, request, args, cotangent, handlers, measure_memory, clock)
            if clock.stretched:  # it loaded code on this first call: judged on a second call, warm
                log, peak, reply = self._call_once(name, request, args, cotangent, handlers, measure_memory, None)
            return to_reply(name, *reply, log, peak.stop() if peak else None)
        except (StudentTimeout, StudentCrashed, StudentOverspent) as exc:
            if time.monotonic() < self.deadline:
                self._broken.setdefault(name, exc)
            raise
