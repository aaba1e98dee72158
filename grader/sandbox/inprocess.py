"""Run student code in this very process. No isolation: for nbgrader hidden-test cells (which already
run in the student's kernel) and the benchmark's lower bound. Data still crosses the codec, so checks
see exactly what they would see from the sandbox, stand-in calls included."""

from __future__ import annotations

import threading
from typing import Mapping, Sequence

from grader.checking.allowance import CallAllowance
from grader.checking.calls import (
    Reply,
    Served,
    StandInClass,
    StandInHandler,
    StudentOverspent,
    build_request,
    overspent,
    serve_helper,
)
from grader.checking.objectcalls import ObjectCalls
from grader.jail import execute, invoke
from grader.jail.codec import decode_frame, encode_message
from grader.jail.isolation import fix_mmap_threshold, release_free_memory

from .procfs import PeakMemory
from .replies import to_reply


def _cross(message: dict, values: dict) -> tuple[dict, dict]:
    return decode_frame(encode_message(message, values))  # what would cross the boundary


# What the request being answered in this thread serves its stand-ins with: (handlers, log, allowance,
# refusals), innermost last. The student's code reaches them through the one function ``_ask``, so its stubs
# are made once per process (grader.jail.invoke caches a stub per asking function; one per request made a
# class per call).
_ANSWERING = threading.local()


def _answering() -> list[tuple]:
    if not hasattr(_ANSWERING, "stack"):
        _ANSWERING.stack = []
    return _ANSWERING.stack


def _ask(name, kind, args, cotangent):
    if not _answering():
        raise RuntimeError(f"{name} was called after the call it was given to had returned")
    stand_ins, log, allowance, stopped = _answering()[-1]
    try:
        reply, reply_values = _cross(
            *serve_helper(
                stand_ins,
                *_cross({"op": "helper", "name": name, "kind": kind}, {"args": args, "cotangent": cotangent}),
                log,
                allowance,
            )
        )
    except StudentOverspent as exc:  # the student's code could catch it here: it is raised again by _request
        stopped.append(exc)
        raise
    if not reply.get("ok"):
        invoke.raise_helper_error(reply.get("error"))
    return reply_values.get("value")


class InProcess(ObjectCalls):
    def __init__(self, namespace: dict):
        self.ns = namespace

    @classmethod
    def from_cells(
        cls, cells: Sequence[tuple[int, str]], modules: Sequence[str] = ()
    ) -> tuple["InProcess", list[dict]]:
        ns = execute.fresh_namespace()
        with execute.course_modules(modules):
            reports = [execute.run_cell(i, src, ns) for i, src in cells]
        return cls(ns), reports

    def _request(
        self,
        request: dict,
        values: dict,
        stand_ins: Mapping[str, StandInHandler] | None = None,
        log: list[Served] | None = None,
        allowance: CallAllowance | None = None,
    ) -> tuple[dict, dict]:
        stopped: list[StudentOverspent] = []
        _answering().append((stand_ins or {}, log, allowance, stopped))
        try:
            answer = _cross(*invoke.handle(self.ns, *_cross(request, values), _ask))
        finally:
            _answering().pop()
        if stopped:
            raise overspent(str(request.get("name")), stopped[0].message)
        return answer

    def defines(self, name: str) -> bool:
        return bool(self._request({"op": "defines", "name": name}, {})[0].get("defines"))

    def get(self, name: str):
        return to_reply(name, *self._request({"op": "get", "name": name}, {})).value

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
        )
        log: list[Served] = []
        if measure_memory:
            fix_mmap_threshold(128 * 1024)  # as in the sandbox: freed blocks leave, so the peak is what was live
            # Memory this process freed before (other work of the same kernel or test process) is still resident:
            # given back now, so that the call's allocations raise the high-water mark rather than reuse it.
            release_free_memory()
        peak = PeakMemory("self") if measure_memory else None
        # No CPU budget in-process (nothing is timed here), but a stand-in's size is bounded all the same.
        allowance = CallAllowance.for_call(list(args), float("inf"))
        reply = self._request(request, {"args": list(args), "cotangent": cotangent}, handlers, log, allowance)
        return to_reply(name, *reply, log, peak.stop() if peak else None)
