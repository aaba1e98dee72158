"""Answer one request against the student's namespace, in whatever process holds it.

Requests and replies are plain messages (see :mod:`grader.codec`). Used by the sandbox child and by
the in-process backend, so both see the same behaviour. Imports only numpy, torch and the codec.
"""
from __future__ import annotations

import contextlib

import torch

from .execute import CappedText, describe_exception


def _error(exc: BaseException) -> tuple[dict, dict]:
    return {"ok": False, "error": describe_exception(exc)}, {}


def _traced(ns: dict, name: str, shapes: list):
    original = ns.get(name)
    if not callable(original):
        return contextlib.nullcontext()

    def tracer(*args, **kwargs):
        x = args[0] if args else kwargs.get("x")
        shapes.append(list(getattr(x, "shape", ())))
        return original(*args, **kwargs)

    @contextlib.contextmanager
    def swap():
        ns[name] = tracer
        try:
            yield
        finally:
            ns[name] = original

    return swap()


def _call(ns: dict, request: dict, values: dict) -> tuple[dict, dict]:
    name = str(request.get("name"))
    if name not in ns:
        return {"ok": False, "missing": True}, {}
    fn = ns[name]
    if not callable(fn):
        return {"ok": False, "error": {"type": "TypeError", "message": f"{name} is not a function", "where": ""}}, {}
    args = list(values.get("args") or [])
    grad_wrt = [int(i) for i in request.get("grad_wrt") or []]
    for i in grad_wrt:
        if isinstance(args[i], torch.Tensor) and args[i].is_floating_point():
            args[i] = args[i].detach().clone().requires_grad_(True)
    shapes: list = []
    sink = CappedText()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), _traced(ns, request.get("trace") or "", shapes):
            with torch.enable_grad():
                out = fn(*args)
                grads = None
                cot = values.get("cotangent")
                if grad_wrt and isinstance(out, torch.Tensor) and out.requires_grad and isinstance(cot, torch.Tensor) \
                        and tuple(out.shape) == tuple(cot.shape):
                    inputs = [args[i] for i in grad_wrt]
                    got = torch.autograd.grad((out * cot.to(out.dtype)).sum(), inputs, allow_unused=True)
                    grads = [torch.zeros_like(x) if g is None else g.detach() for x, g in zip(inputs, got)]
    except BaseException as exc:  # the student's exception, including SystemExit
        return _error(exc)
    reply = {"ok": True, "has_grads": grads is not None, "trace": shapes, "stdout": sink.getvalue()[:4000]}
    reply_values = {"value": out}
    if grads is not None:
        reply_values["grads"] = grads
    if request.get("return_args"):
        reply_values["args_after"] = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
    return reply, reply_values


def handle(ns: dict, request: dict, values: dict) -> tuple[dict, dict]:
    """Dispatch a request: ``call``, ``get`` or ``defines``."""
    op = request.get("op")
    name = str(request.get("name"))
    if op == "call":
        return _call(ns, request, values)
    if op == "defines":
        return {"ok": True, "defines": name in ns}, {}
    if op == "get":
        if name not in ns:
            return {"ok": False, "missing": True}, {}
        return {"ok": True}, {"value": ns[name]}
    return {"ok": False, "error": {"type": "ProtocolError", "message": f"unknown op {op!r}", "where": ""}}, {}
