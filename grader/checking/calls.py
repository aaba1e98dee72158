"""How checks reach student code: the ``StudentCode`` interface, replies, and what can go wrong.

A backend (the sandbox, or in-process for the nbgrader hook and the benchmark's lower bound) runs
the student's notebook and answers calls with plain data that has crossed :mod:`grader.jail.codec`.

Only two things in a reply can earn points: the value the student's function returned and the
gradients autograd found for it. Everything else the grader knows about a call it records itself:
``served`` lists the calls the student's code made to stand-ins (grader-served replacements of other
student functions, see :mod:`grader.checking.standins`), as the grader answered them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping, Protocol, Sequence

from .allowance import CallAllowance


@dataclass(frozen=True)
class Served:
    """One call the student's code made to a stand-in, as the grader saw it: the name and argument shapes."""

    name: str
    shapes: tuple  # one shape per argument (() for scalars and non-arrays)


@dataclass(frozen=True)
class Reply:
    value: Any
    grads: tuple | None = None  # one gradient per requested argument; None when the output was not differentiable
    again: Any = None  # with ``again=True``: the value of a second call on the very same argument objects
    served: tuple[Served, ...] = ()  # recorded by the grader, never reported by the student's process
    # With ``measure_memory=True``: the most memory the student's process held during the call beyond what
    # it held before, in bytes, measured by the grader from /proc (None where it cannot be measured).
    peak_bytes: int | None = None
    # With ``grad_params=True`` on a method call: the gradient of the objective for each of the object's
    # parameters, by name (what autograd found for the grader's cotangent, like ``grads``).
    param_grads: dict | None = None


class StudentRaised(Exception):
    """The student's function raised; carries only text from the student's process."""

    def __init__(self, type_name: str, message: str, where: str = ""):
        super().__init__(f"{type_name}: {message}")
        self.type_name, self.message, self.where = type_name, message, where


class StudentMissing(Exception):
    def __init__(self, name: str, detail: str = ""):
        super().__init__(f"{name} is not defined" + (f" ({detail})" if detail else ""))
        self.name, self.detail = name, detail


class StudentAborted(BaseException):
    """The call cannot finish: it ran out of time or the student's process died.

    A BaseException, so hypothesis does not keep calling a function that hangs while it shrinks.
    """

    status = "error"
    kind = "crash"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class StudentTimeout(StudentAborted):
    status = "timeout"
    kind = "timeout"


class StudentCrashed(StudentAborted):
    status = "error"
    kind = "crash"


class StudentOverspent(StudentAborted):
    """The call made the grader work beyond its allowance (a stand-in reply too large, a frame too big):
    the call's failure, of kind ``resources``; the grader never did the oversized work."""

    status = "error"
    kind = "resources"


def overspent(name: str, reason: str) -> StudentOverspent:
    """The failure of a call to ``name`` that the grader stopped for ``reason``."""
    return StudentOverspent(f"calling {name} was stopped: {reason}")


class HelperError(Exception):
    """A stand-in refused its arguments; the student's code sees it raised as ``type_name``."""

    def __init__(self, type_name: str, message: str):
        super().__init__(message)
        self.type_name, self.message = type_name, message


class StandInHandler(Protocol):
    """What the grader runs when the student's code calls a stand-in (see :mod:`grader.checking.standins`)."""

    name: str
    params: tuple[str, ...]

    def __call__(self, args: list) -> Any: ...

    def vjp(self, args: list, cotangent) -> list: ...

    def cost(self, args: list) -> tuple[int, float]: ...


GENERATOR_STATE = (
    "torch.Generator state"  # the key a stub sends a generator argument's state under (grader.jail.invoke)
)


def _generator(state):
    """A CPU torch.Generator in ``state`` (a uint8 tensor from Generator.get_state()); the state is checked by torch."""
    import torch

    if not (getattr(state, "dtype", None) is torch.uint8 and getattr(state, "ndim", 0) == 1):
        raise HelperError("TypeError", "a generator's state must be the uint8 tensor Generator.get_state() gives")
    generator = torch.Generator()
    try:
        generator.set_state(state)
    except (RuntimeError, ValueError) as exc:
        raise HelperError("RuntimeError", f"the generator's state was refused: {exc}") from None
    return generator


VJP_FACTOR = 3  # a backward pass through a stand-in recomputes its forward pass and then differentiates it


def serve_helper(
    stand_ins: Mapping[str, StandInHandler],
    request: dict,
    values: dict,
    log: list[Served],
    allowance: CallAllowance | None = None,
    record: dict | None = None,
) -> tuple[dict, dict]:
    """The grader's answer to one helper request from the student's process (shared by all backends).

    With an ``allowance``, the computation is estimated first and refused (StudentOverspent, ending the
    call) when it is larger than the graded call allows; the CPU time it then takes is charged to the call.
    ``record`` receives what was done (the handler, the estimate, the Served entry, the seconds charged), for
    grader.sandbox.remembered."""
    name = str(request.get("name"))
    handler = stand_ins.get(name)
    args = values.get("args")
    if handler is None or not isinstance(args, list):
        return {"ok": False, "error": {"type": "TypeError", "message": f"{name} is not available here"}}, {}
    backward = request.get("kind") == "vjp"
    if allowance is not None:
        elements, work = handler.cost(args)
        factor = VJP_FACTOR if backward else 1
        refused = allowance.refusal(name, elements * factor, work * factor)
        if refused:
            raise StudentOverspent(refused)
        if record is not None:
            record.update(handler=handler, elements=elements * factor, work=work * factor)
    started = time.thread_time()
    try:
        if backward:
            return {"ok": True}, {"value": handler.vjp(args, values.get("cotangent"))}
        from .compare import shape_of  # torch: imported by the grading process only, never by an outline's reader

        log.append(Served(name, tuple(shape_of(a) for a in args)))
        if record is not None:
            record["served"] = log[-1]
        drawing = [i for i, a in enumerate(args) if isinstance(a, dict) and set(a) == {GENERATOR_STATE}]
        if not drawing:
            return {"ok": True}, {"value": handler(args)}
        args = [_generator(a[GENERATOR_STATE]) if i in drawing else a for i, a in enumerate(args)]
        value = handler(args)  # the student's generator continues from the state these draws leave
        return {"ok": True}, {"value": [value, [args[i].get_state() for i in drawing]]}
    except HelperError as exc:
        return {"ok": False, "error": {"type": exc.type_name, "message": exc.message[:2000]}}, {}
    finally:
        if allowance is not None:
            spent = time.thread_time() - started
            allowance.charge(spent)
            if record is not None:
                record["seconds"] = spent


@dataclass(frozen=True)
class Made:
    """An argument the student's process builds on the grader's behalf (grader.jail.objects): a torch.Generator
    seeded with ``seed``, a callable whose every call the grader answers with ``handler`` (named ``name``),
    or an object constructed earlier (``handle``)."""

    kind: str  # "generator", "served" or "handle"
    seed: int = 0
    name: str = ""
    handler: Any = None
    handle: str = ""

    def spec(self) -> dict:
        if self.kind == "generator":
            return {"kind": "generator", "seed": int(self.seed)}
        if self.kind == "served":
            return {"kind": "served", "name": self.name, "params": list(self.handler.params)}
        return {"kind": "handle", "handle": self.handle}


@dataclass(frozen=True)
class StandInClass:
    """A class another class builds on, replaced while that one is graded (grader.jail.objects.stand_in_class):
    ``spec`` lays out its parameters as the course's class does, and the grader answers its forward with
    ``forward`` (taking the forward arguments, then the parameters in registration order)."""

    name: str
    spec: dict
    forward: Any
    children: tuple = ()  # the StandInClass of each child the spec builds

    def names(self) -> list[str]:
        """This class's name and those of the classes its spec builds as children, at any depth."""
        return [self.name, *(n for child in self.children for n in child.names())]

    def handlers(self) -> dict:
        found = {f"{self.name}.forward": self.forward}
        for child in self.children:
            found.update(child.handlers())
        return found


def build_request(
    op: str,
    name: str,
    args: Sequence,
    *,
    grad_wrt: Sequence[int] = (),
    again: bool = False,
    stand_ins: Mapping[str, StandInHandler] | None = None,
    handle: str | None = None,
    method: str | None = None,
    classes: Mapping[str, StandInClass] | None = None,
    grad_params: bool = False,
    prepare: Mapping | None = None,
    layout_only: Sequence[str] = (),
) -> tuple[dict, list, dict]:
    """A call-like request as both backends send it: ``(request, args, handlers)``; ``args`` has each Made
    argument replaced by None (the student's process builds it), ``handlers`` answers every stand-in."""
    request = {
        "op": op,
        "name": name,
        "grad_wrt": list(grad_wrt),
        "again": again,
        "stand_ins": {k: list(h.params) for k, h in (stand_ins or {}).items()},
    }
    handlers = dict(stand_ins or {})
    made = [[i, a.spec()] for i, a in enumerate(args) if isinstance(a, Made)]
    if made:
        request["make"] = made
        handlers.update({a.name: a.handler for a in args if isinstance(a, Made) and a.kind == "served"})
    if handle is not None:
        request["handle"] = handle
        if method is not None:
            request["method"] = method
    if classes:
        request["stand_in_classes"] = {k: c.spec for k, c in classes.items()}
        if layout_only:  # student classes whose __init__ is not run again (grader.jail.objects.stand_in_classes)
            request["layout_only"] = list(layout_only)
        for c in classes.values():
            handlers.update(c.handlers())
    if grad_params:
        request["grad_params"] = True
    if prepare:  # with op construct: grader.jail.objects.prepared
        request.update({k: v for k, v in prepare.items() if k in ("double", "fill_seed")})
    return request, [None if isinstance(a, Made) else a for a in args], handlers


class StudentCode(Protocol):
    def defines(self, name: str) -> bool: ...

    def get(self, name: str) -> Any: ...

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
    ) -> Reply: ...
