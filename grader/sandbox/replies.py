"""Turn a decoded reply message into a Reply, or the exception it stands for (shared by all backends)."""

from __future__ import annotations

from grader.checking.calls import Reply, Served, StudentMissing, StudentRaised
from grader.errors import ProtocolError


def to_reply(name: str, message: dict, values: dict, served: list[Served] = (), peak_bytes: int | None = None) -> Reply:
    """``served`` is the grader's own record of the stand-in calls it answered during this call."""
    if not message.get("ok"):
        if message.get("missing"):
            raise StudentMissing(name)
        error = message.get("error")
        if not isinstance(error, dict):
            raise ProtocolError("error reply without an error")
        raise StudentRaised(
            str(error.get("type", "Exception"))[:100],
            str(error.get("message", ""))[:2000],
            str(error.get("where", ""))[:100],
        )
    grads, param_grads = values.get("grads"), values.get("param_grads")
    return Reply(
        value=values.get("value"),
        grads=tuple(grads) if isinstance(grads, list) else None,
        again=values.get("again"),
        served=tuple(served),
        peak_bytes=peak_bytes,
        param_grads=param_grads if isinstance(param_grads, dict) else None,
    )
