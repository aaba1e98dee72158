"""Answer one request against the student's namespace, in whatever process holds it.

Requests and replies are plain messages (see :mod:`grader.jail.codec`). Used by the sandbox child and by
the in-process backend, so both see the same behaviour. Imports only numpy, torch and the codec.

A call may name *stand-ins*: other student functions that, for the length of the call, are replaced
by stubs that ask the grader for each result (``ask``). Every name bound to the student's own
function (aliases such as ``step = recurrent_unit``, default arguments) is swapped too. What the
grader counts of those calls it counts on its own side: nothing this module reports about a call
earns a point, only the value returned and its gradients.
"""

from __future__ import annotations

import contextlib
import functools
import json
import types
from typing import Callable

import torch

from . import objects
from .execute import CappedText, describe_exception

Ask = Callable[[str, str, list, object], object]  # (name, "call" | "vjp", args, cotangent) -> value
GENERATOR_STATE = "torch.Generator state"  # how a generator argument of a stand-in crosses (grader.checking.calls)
RAISABLE = {"ValueError": ValueError, "TypeError": TypeError, "RuntimeError": RuntimeError, "IndexError": IndexError}


def _error(exc: BaseException) -> tuple[dict, dict]:
    return {"ok": False, "error": describe_exception(exc)}, {}


def _stub(name: str, params: list[str], ask: Ask):
    """A function that behaves like the student's ``name`` but is computed by the grader. ``params``
    names its parameters in order; ``"mask=null"`` gives one a default (a JSON literal)."""
    names = [p.split("=", 1)[0] for p in params]
    defaults = {}
    for p in params:
        if "=" in p:
            try:
                defaults[p.split("=", 1)[0]] = json.loads(p.split("=", 1)[1])
            except ValueError:
                pass

    def bind(args, kwargs) -> list:
        if len(args) > len(names):
            raise TypeError(f"{name}() takes {len(names)} arguments ({', '.join(names)}); got {len(args)}")
        bound = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in bound:
                raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
            bound[key] = value
        missing = [n for n in names if n not in bound and n not in defaults]
        if missing:
            raise TypeError(f"{name}() missing argument(s) {', '.join(missing)}; it takes ({', '.join(names)})")
        return [bound[n] if n in bound else defaults[n] for n in names]

    def computed(args: list):
        """The grader's result for ``args``. A torch.Generator cannot cross: its state does, and the state the
        grader's draws leave comes back into the student's generator, so later draws go on from there."""
        drawing = [i for i, a in enumerate(args) if isinstance(a, torch.Generator)]
        if not drawing:
            return ask(name, "call", args, None)
        sent = [{GENERATOR_STATE: a.get_state()} if i in drawing else a for i, a in enumerate(args)]
        answer = ask(name, "call", sent, None)
        if not (isinstance(answer, (list, tuple)) and len(answer) == 2 and len(answer[1]) == len(drawing)):
            raise RuntimeError(f"{name}: the grader's answer lacks the generators' states")
        for i, state in zip(drawing, answer[1]):
            args[i].set_state(state)
        return answer[0]

    class Differentiable(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            ctx.args = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
            out = computed(ctx.args)
            ctx.several = isinstance(out, (list, tuple))
            return tuple(out) if ctx.several else out

        @staticmethod
        def backward(ctx, *grad):
            cot = [g.detach() for g in grad] if ctx.several else grad[0].detach()
            grads = ask(name, "vjp", ctx.args, cot)
            grads = list(grads) if isinstance(grads, (list, tuple)) else []
            return tuple(
                g if needed and isinstance(g, torch.Tensor) else None
                for needed, g in zip(ctx.needs_input_grad, grads + [None] * len(ctx.args))
            )

    def stand_in(*args, **kwargs):
        args = bind(args, kwargs)
        if torch.is_grad_enabled() and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
            return Differentiable.apply(*args)
        return computed([a.detach() if isinstance(a, torch.Tensor) else a for a in args])

    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in


_STUBS: dict = {}  # (name, params, ask) -> its stub: made once per process (an autograd Function class each)


def _cached_stub(name: str, params: tuple[str, ...], ask: Ask):
    """The stub of ``name`` with these parameters, made on its first use: every call of an exercise swaps in
    one for each other graded function, and making one costs about a tenth of a millisecond."""
    key = (name, params, ask)
    if key not in _STUBS:
        _STUBS[key] = _stub(name, list(params), ask)
    return _STUBS[key]


_LAST_STUBS: dict = {}  # ask -> (specs, stubs) of the latest call: a check's calls name the same stand-ins


def _stubs_for(specs: dict, ask: Ask) -> dict:
    """Each stand-in's name -> its stub (the mapping made for the latest call when it named the same ones)."""
    last = _LAST_STUBS.get(ask)
    if last is not None and last[0] == specs:
        return last[1]
    stubs = {str(name): _cached_stub(str(name), tuple(str(p) for p in params), ask) for name, params in specs.items()}
    _LAST_STUBS[ask] = (specs, stubs)
    return stubs


@contextlib.contextmanager
def _stand_ins(ns: dict, specs: dict, ask: Ask | None):
    """Swap every binding of each named student function for a grader-served stub, then restore.

    One pass over the namespace whatever the number of stand-ins (an exercise is graded with one for
    every other graded function of its assignment): names bound to a student function or its alias,
    partial objects and containers that captured it, and default arguments that did."""
    if not specs or ask is None:
        yield
        return
    undo = []
    stubs = _stubs_for(specs, ask)
    # the student's own function object -> its stub (functions the notebook defines under a graded name)
    by_object, originals = {}, {}
    for name, stub in stubs.items():
        value = ns.get(name)
        if callable(value):
            by_object[id(value)], originals[id(value)] = stub, value
    try:
        for key, value in list(ns.items()):
            if key in stubs:
                replacement = stubs[key]
            elif id(value) in by_object and value is originals[id(value)]:
                replacement = by_object[id(value)]
            elif not by_object or id(type(value)) in _HOLDS_NOTHING:
                continue
            else:
                replacement = _swap_captured(value, originals, by_object)
            if replacement is not value:
                undo.append((ns, key, value))
                ns[key] = replacement
        for name, stub in stubs.items():
            if name not in ns:
                undo.append((ns, name, _MISSING))
                ns[name] = stub
        if by_object:
            for value in list(ns.values()):  # default arguments that captured the student's function
                if isinstance(value, types.FunctionType):
                    for attr, defaults in (
                        ("__defaults__", value.__defaults__),
                        ("__kwdefaults__", value.__kwdefaults__),
                    ):
                        swapped = _swap_captured(defaults, originals, by_object) if defaults else defaults
                        if swapped is not defaults:
                            undo.append((value, attr, defaults))
                            setattr(value, attr, swapped)
        yield
    finally:
        for target, key, value in reversed(undo):
            if isinstance(target, dict):
                if value is _MISSING:
                    target.pop(key, None)
                else:
                    target[key] = value
            else:
                setattr(target, key, value)


_MISSING = object()
# Types whose values _swap_captured always returns as they are (exactly these types, by identity, so that no
# method of a student's own type runs here): most of a notebook's names are functions, modules and numbers.
_HOLDS_NOTHING = frozenset(
    id(t)
    for t in (
        types.FunctionType,
        types.ModuleType,
        types.BuiltinFunctionType,
        type,
        int,
        float,
        complex,
        bool,
        str,
        bytes,
        type(None),
    )
)


def _swap_captured(value, originals: dict, stubs: dict):
    """``value`` with each student function in ``originals`` (by id) replaced by its stub in ``stubs`` where it
    was captured: a functools.partial of it (or with it among its arguments), or a list, tuple or dict
    holding it. ``value`` itself when unchanged."""

    def swap(v):
        return stubs[id(v)] if id(v) in stubs and originals[id(v)] is v else v

    def holds(values) -> bool:  # most containers (the namespace's __builtins__ among them) hold none: not copied
        return not stubs.keys().isdisjoint(map(id, values))  # originals keeps each object alive: its id is its own

    if isinstance(value, functools.partial):
        func = swap(value.func)
        args = tuple(swap(a) for a in value.args)
        keywords = {k: swap(v) for k, v in value.keywords.items()}
        if (
            func is value.func
            and all(a is b for a, b in zip(args, value.args))
            and all(keywords[k] is value.keywords[k] for k in keywords)
        ):
            return value
        return functools.partial(func, *args, **keywords)
    if type(value) in (list, tuple):
        return type(value)(swap(v) for v in value) if holds(value) else value
    if type(value) is dict:
        return {k: swap(v) for k, v in value.items()} if holds(value.values()) else value
    return value


def _objective(out, cot):
    """``sum(out * cot)`` when ``out`` is differentiable and ``cot`` matches it; for a tuple of outputs,
    ``cot`` is a list with one cotangent (or None, to leave that output out) per output."""
    if isinstance(out, torch.Tensor):
        outs, cots = [out], [cot]
    elif isinstance(out, (list, tuple)) and isinstance(cot, (list, tuple)) and len(out) == len(cot):
        outs, cots = list(out), list(cot)
    else:
        return None
    terms = []
    for o, c in zip(outs, cots):
        if c is None:
            continue
        if not (isinstance(o, torch.Tensor) and isinstance(c, torch.Tensor) and tuple(o.shape) == tuple(c.shape)):
            return None
        if o.requires_grad:
            terms.append((o * c.to(o.dtype)).sum())
    return sum(terms) if terms else None


@contextlib.contextmanager
def _seeded(seed):
    """Random numbers drawn inside from torch's global generator seeded with ``seed`` (an int), the notebook's own
    stream left where it was: a class built on the grader's request with its fill seed draws the initial values of
    whatever the fill cannot reach (layers in a plain list) from that seed, so two instances built alike are alike
    and a regrade builds the same module."""
    if not isinstance(seed, int):
        yield
        return
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def _call(ns: dict, request: dict, values: dict, ask: Ask | None) -> tuple[dict, dict]:
    """Call a student function (``name``), a class (``op: construct``, kept under ``handle``) or a method
    of an object constructed earlier (``handle`` and ``method``), with stand-ins and made arguments."""
    name = str(request.get("name"))
    constructing = request.get("op") == "construct"
    if request.get("handle") is not None and not constructing:
        fn, module, problem = objects.target(ns, request)
        if problem:
            return {"ok": False, "error": {"type": "RuntimeError", "message": problem, "where": ""}}, {}
    elif name not in ns:
        return {"ok": False, "missing": True}, {}
    else:
        fn, module = ns[name], None
    if not callable(fn):
        return {"ok": False, "error": {"type": "TypeError", "message": f"{name} is not a function", "where": ""}}, {}
    stub = functools.partial(_stub, ask=objects.current_ask)
    args = objects.made_arguments(list(values.get("args") or []), request.get("make"), stub)
    grad_wrt = [int(i) for i in request.get("grad_wrt") or [] if 0 <= int(i) < len(args)]
    for i in grad_wrt:
        if isinstance(args[i], torch.Tensor) and args[i].is_floating_point():
            args[i] = args[i].detach().clone().requires_grad_(True)
    grad_params = bool(request.get("grad_params")) and module is not None
    specs = request.get("stand_ins") or {}
    sink = CappedText()
    reply_values: dict = {}
    try:
        with (
            contextlib.redirect_stdout(sink),
            contextlib.redirect_stderr(sink),
            objects.asking(ask),
            _stand_ins(ns, specs if isinstance(specs, dict) else {}, ask),
            objects.stand_in_classes(ns, request.get("stand_in_classes"), stub, request.get("layout_only")),
        ):
            with torch.enable_grad():
                with _seeded(request.get("fill_seed") if constructing else None):
                    out = fn(*args)
                if constructing:
                    objects.OBJECTS[str(request.get("handle"))] = out
                    return {"ok": True}, {"value": objects.prepared(out, request)}
                if request.get("method") in objects.IN_PLACE:
                    return {"ok": True}, {"value": None}
                objective = _objective(out, values.get("cotangent")) if grad_wrt or grad_params else None
                if objective is not None:
                    inputs = [args[i] for i in grad_wrt]
                    params = [(k, p) for k, p in module.named_parameters() if p.requires_grad] if grad_params else []
                    got = torch.autograd.grad(objective, inputs + [p for _, p in params], allow_unused=True)
                    reply_values["grads"] = [
                        torch.zeros_like(x) if g is None else g.detach() for x, g in zip(inputs, got[: len(inputs)])
                    ]
                    if grad_params:
                        reply_values["param_grads"] = {
                            k: torch.zeros_like(p) if g is None else g.detach()
                            for (k, p), g in zip(params, got[len(inputs) :])
                        }
            reply_values["value"] = out
            if request.get("again"):
                with torch.no_grad():
                    reply_values["again"] = fn(
                        *args
                    )  # the same argument objects: shows what the first call did to them
    except BaseException as exc:  # the student's exception, including SystemExit
        return _error(exc)
    return {"ok": True}, reply_values


def handle(ns: dict, request: dict, values: dict, ask: Ask | None = None) -> tuple[dict, dict]:
    """Dispatch a request: ``call``, ``construct``, ``state``, ``load``, ``get`` or ``defines``."""
    op = request.get("op")
    name = str(request.get("name"))
    if op in ("call", "construct"):
        return _call(ns, request, values, ask)
    if op in ("state", "load"):
        try:
            if op == "state":
                return {"ok": True}, {"value": objects.state(request)}
            objects.load(request, values)
            return {"ok": True}, {"value": None}
        except BaseException as exc:  # a module that refuses the grader's parameters
            return _error(exc)
    if op == "defines":
        return {"ok": True, "defines": name in ns}, {}
    if op == "get":
        if name not in ns:
            return {"ok": False, "missing": True}, {}
        return {"ok": True}, {"value": ns[name]}
    return {"ok": False, "error": {"type": "ProtocolError", "message": f"unknown op {op!r}", "where": ""}}, {}


def raise_helper_error(error) -> None:
    """Raise, inside the student's code, the exception a stand-in answered with."""
    error = error if isinstance(error, dict) else {}
    raise RAISABLE.get(str(error.get("type")), RuntimeError)(str(error.get("message", ""))[:2000])


__all__ = ["handle", "raise_helper_error"]
