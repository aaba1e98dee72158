"""Turn a decoded reply message into a Reply, or the exception it stands for (shared by all backends)."""
from __future__ import annotations

from ..calls import Reply, StudentMissing, StudentRaised
from ..errors import ProtocolError


def to_reply(name: str, message: dict, values: dict) -> Reply:
    if not message.get("ok"):
        if message.get("missing"):
            raise StudentMissing(name)
        error = message.get("error")
        if not isinstance(error, dict):
            raise ProtocolError("error reply without an error")
        raise StudentRaised(str(error.get("type", "Exception"))[:100], str(error.get("message", ""))[:2000],
                            str(error.get("where", ""))[:100])
    grads = values.get("grads") if message.get("has_grads") else None
    trace = message.get("trace") or []
    if not isinstance(trace, list):
        raise ProtocolError("trace is not a list")
    args_after = values.get("args_after")
    return Reply(
        value=values.get("value"),
        grads=tuple(grads) if isinstance(grads, list) else None,
        trace=tuple(tuple(int(d) for d in s) for s in trace[:10_000] if isinstance(s, list)),
        args_after=tuple(args_after) if isinstance(args_after, list) else None,
        stdout=str(message.get("stdout", ""))[:4000],
    )
