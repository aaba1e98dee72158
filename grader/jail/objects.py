"""Objects by handle, on the student's side: what lets the grader grade classes without the objects ever
crossing the boundary.

The grader asks the student's process to *construct* an instance of a student class (``construct``, with
arguments it chose) and keeps only a handle; it then calls the object's methods, reads its parameters
(``state``: the tensors of ``state_dict()``) and loads parameters of its own choosing (``load``:
``load_state_dict``). Only plain data crosses (tensors, numbers, names); every verdict is computed by the
grader from what comes back, as for functions.

Two kinds of objects are built here on the grader's behalf:

- *made arguments*: a ``torch.Generator`` seeded by the grader, or a grader-served callable (a model whose
  every call is answered by the grader), or an object constructed earlier, passed to a student function;
- *stand-in classes*: while a class is graded, a class it builds on (``RNNLayer`` builds a
  ``RecurrentCell``) is replaced by a ``torch.nn.Module`` whose parameters live here, laid out as the
  course's class lays them out, and whose ``forward`` asks the grader for each result (with its
  parameters as arguments, so gradients reach them). A wrong cell then costs only the cell's exercise.

Imports only torch; used by :mod:`grader.jail.invoke` in whatever process holds the student's namespace.
"""
from __future__ import annotations

import contextlib
import json
from typing import Callable

import torch

OBJECTS: dict[str, object] = {}  # handle -> object constructed on the grader's request, in this process
METHODS = ("__call__", "forward", "double", "float", "eval", "train")  # what the grader may call on an object
IN_PLACE = ("double", "float", "eval", "train")  # methods that change the module and return it: no value sent back
_CURRENT_ASK: list = [None]  # the current request's way to ask the grader (stand-in classes outlive requests)
_CLASSES: dict[str, type] = {}  # stand-in classes by their spec, so objects built earlier keep their class


def current_ask(name: str, kind: str, args: list, cotangent):
    ask = _CURRENT_ASK[0]
    if ask is None:
        raise RuntimeError(f"{name} can only be used while the grader is calling your code")
    return ask(name, kind, args, cotangent)


@contextlib.contextmanager
def asking(ask):
    previous, _CURRENT_ASK[0] = _CURRENT_ASK[0], ask
    try:
        yield
    finally:
        _CURRENT_ASK[0] = previous


def made_arguments(args: list, make, stub: Callable) -> list:
    """``args`` with the grader's made arguments in place: ``make`` is a list of ``[index, spec]``."""
    args = list(args)
    for item in make if isinstance(make, list) else []:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], int) and isinstance(item[1], dict)):
            continue
        index, spec = item
        if not 0 <= index < len(args):
            continue
        kind = spec.get("kind")
        if kind == "generator":
            generator = torch.Generator()
            generator.manual_seed(int(spec.get("seed", 0)))
            args[index] = generator
        elif kind == "served":
            args[index] = stub(str(spec.get("name")), [str(p) for p in spec.get("params", [])])
        elif kind == "handle":
            args[index] = OBJECTS.get(str(spec.get("handle")))
    return args


def stand_in_class(name: str, spec: dict, stub: Callable) -> type:
    """A module laid out as ``spec`` says, whose forward the grader answers (one class per spec)."""
    key = json.dumps([name, spec], sort_keys=True)
    if key in _CLASSES:
        return _CLASSES[key]
    init = [str(p) for p in spec.get("init", [])]
    forward_params = [str(p) for p in spec.get("forward", [])]
    linears = [(str(a), str(i), str(o)) for a, i, o in spec.get("linears", [])]
    children = [(str(a), str(n), s, [str(p) for p in params]) for a, n, s, params in spec.get("children", [])]

    def bind(names: list[str], args, kwargs, what: str) -> list:
        if len(args) > len(names) or any(k not in names for k in kwargs):
            raise TypeError(f"{what} takes ({', '.join(names)})")
        bound = dict(zip(names, args), **kwargs)
        missing = [n for n in names if n not in bound]
        if missing:
            raise TypeError(f"{what} missing argument(s) {', '.join(missing)}; it takes ({', '.join(names)})")
        return [bound[n] for n in names]

    class StandIn(torch.nn.Module):
        def __init__(self, *args, **kwargs):
            super().__init__()
            sizes = dict(zip(init, bind(init, args, kwargs, f"{name}()")))
            for attr, fan_in, fan_out in linears:
                setattr(self, attr, torch.nn.Linear(int(sizes[fan_in]), int(sizes[fan_out])))
            for attr, child, child_spec, params in children:
                setattr(self, attr, stand_in_class(child, child_spec, stub)(*[sizes[p] for p in params]))

        def forward(self, *args, **kwargs):
            inputs = bind(forward_params, args, kwargs, f"{name}.forward()")
            weights = [p for _, p in self.named_parameters()]
            names = forward_params + [f"p{i}" for i in range(len(weights))]
            return stub(f"{name}.forward", names)(*inputs, *weights)

    StandIn.__name__ = StandIn.__qualname__ = name
    _CLASSES[key] = StandIn
    return StandIn


@contextlib.contextmanager
def stand_in_classes(ns: dict, specs, stub: Callable):
    """Bind each named class to its stand-in in the student's namespace for the length of a request."""
    undo = []
    try:
        for name, spec in (specs.items() if isinstance(specs, dict) else []):
            if isinstance(spec, dict):
                undo.append((name, ns.get(name, _MISSING)))
                ns[name] = stand_in_class(str(name), spec, stub)
        yield
    finally:
        for name, value in reversed(undo):
            if value is _MISSING:
                ns.pop(name, None)
            else:
                ns[name] = value


_MISSING = object()


def target(ns: dict, request: dict):
    """What a call request calls: ``ns[name]``, or a method of a constructed object. Returns
    ``(callable, module or None, error message or None)``."""
    handle = request.get("handle")
    if handle is None:
        return ns.get(str(request.get("name"))), None, None
    obj = OBJECTS.get(str(handle))
    method = str(request.get("method", "__call__"))
    if obj is None:
        return None, None, "the object the grader built earlier is gone (the notebook's process was restarted)"
    if method not in METHODS:
        return None, None, f"the grader does not call {method}"
    fn = obj if method == "__call__" else getattr(obj, method, None)
    return fn, obj if isinstance(obj, torch.nn.Module) else None, None


def prepared(obj, request: dict):
    """A just-constructed object made ready as the grader asked in the same request (one round trip instead
    of four): ``double`` converts a module to float64; ``fill_seed`` gives every floating parameter, in name
    order, standard normal numbers from a torch.Generator with that seed divided by the square root of its
    last size. Returns the shapes of the module's state_dict by name (the class's name for anything else)."""
    if not isinstance(obj, torch.nn.Module):
        return type(obj).__name__
    if request.get("double"):
        obj.double()
    seed = request.get("fill_seed")
    if isinstance(seed, int):
        generator = torch.Generator()
        generator.manual_seed(seed)
        with torch.no_grad():
            for _, p in sorted(obj.named_parameters()):
                if p.is_floating_point():
                    fan = p.shape[-1] if p.ndim else 1
                    p.copy_(torch.randn(p.shape, generator=generator, dtype=torch.float64).to(p.dtype) / max(fan, 1) ** 0.5)
    return {str(k): list(v.shape) for k, v in obj.state_dict().items() if isinstance(v, torch.Tensor)}


def state(request: dict) -> dict:
    """The tensors of a constructed module's ``state_dict()``, detached copies, by name."""
    obj = OBJECTS.get(str(request.get("handle")))
    if not isinstance(obj, torch.nn.Module):
        raise TypeError("the object is not a torch.nn.Module (it has no state_dict)")
    return {str(k): v.detach().clone() for k, v in obj.state_dict().items() if isinstance(v, torch.Tensor)}


def load(request: dict, values: dict) -> None:
    obj = OBJECTS.get(str(request.get("handle")))
    if not isinstance(obj, torch.nn.Module):
        raise TypeError("the object is not a torch.nn.Module (it has no load_state_dict)")
    tensors = (values.get("args") or [None])[0]
    if not isinstance(tensors, dict):
        raise TypeError("the grader sent no parameters to load")
    with torch.no_grad():
        obj.load_state_dict(tensors, strict=True)
