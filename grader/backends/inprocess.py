"""Run student code in this very process. No isolation: for nbgrader hidden-test cells (which already
run in the student's kernel) and the benchmark's lower bound. Data still crosses the codec, so checks
see exactly what they would see from the sandbox."""
from __future__ import annotations

from typing import Sequence

from .. import execute, invoke
from ..calls import Reply
from ..codec import decode_frame, encode_message
from .replies import to_reply


class InProcess:
    def __init__(self, namespace: dict):
        self.ns = namespace

    @classmethod
    def from_cells(cls, cells: Sequence[tuple[int, str]]) -> tuple["InProcess", list[dict]]:
        ns = execute.fresh_namespace()
        reports = [execute.run_cell(i, src, ns) for i, src in cells]
        return cls(ns), reports

    def _request(self, request: dict, values: dict) -> tuple[dict, dict]:
        request, values = decode_frame(encode_message(request, values))  # what would cross the boundary
        reply, reply_values = invoke.handle(self.ns, request, values)
        return decode_frame(encode_message(reply, reply_values))

    def defines(self, name: str) -> bool:
        return bool(self._request({"op": "defines", "name": name}, {})[0].get("defines"))

    def get(self, name: str):
        return to_reply(name, *self._request({"op": "get", "name": name}, {})).value

    def call(self, name: str, args: Sequence, *, grad_wrt: Sequence[int] = (), cotangent=None,
             trace: str | None = None, return_args: bool = False) -> Reply:
        request = {"op": "call", "name": name, "grad_wrt": list(grad_wrt), "trace": trace, "return_args": return_args}
        values = {"args": list(args), "cotangent": cotangent}
        return to_reply(name, *self._request(request, values))
