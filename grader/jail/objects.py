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
import inspect
import json
from typing import Callable

import torch

OBJECTS: dict[str, object] = {}  # handle -> object constructed on the grader's request, in this process
METHODS = ("__call__", "forward", "double", "float", "eval", "train")  # what the grader may call on an object
IN_PLACE = ("double", "float", "eval", "train")  # methods that change the module and return it: no value sent back
_CURRENT_ASK: list = [None]  # the current request's way to ask the grader (stand-in classes outlive requests)
# stand-in classes by their spec and the student's classes, so objects built earlier keep their class
_CLASSES: dict = {}


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


def layout(spec: dict) -> list[str]:
    """The parameter names a stand-in class's spec lays out, in the order its forward sends them: each Linear's
    weight and bias, then each child's parameters under its attribute."""
    names = [f"{attr}.{p}" for attr, _, _ in spec.get("linears", []) for p in ("weight", "bias")]
    for attr, _, child_spec, _ in spec.get("children", []):
        names += [f"{attr}.{n}" for n in layout(child_spec)]
    return names


def _bind(names: list[str], args, kwargs, what: str, own=None) -> list:
    """``args`` and ``kwargs`` as the values of ``names`` in order: by the course's names, else (``own``: the
    student's method) by the student's own signature, its first ``len(names)`` parameters in order."""
    bound = dict(zip(names, args))
    if len(args) <= len(names) and all(k in names and k not in bound for k in kwargs):
        bound.update(kwargs)
        if all(n in bound for n in names):
            return [bound[n] for n in names]
    values = []
    if own is not None:
        try:
            signature = inspect.signature(own)
            arguments = signature.bind(None, *args, **kwargs)
            arguments.apply_defaults()
            values = [
                arguments.arguments[p.name]
                for p in list(signature.parameters.values())[1:]
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ][: len(names)]
        except (TypeError, ValueError):
            values = []
    if len(values) < len(names):
        raise TypeError(f"{what} takes ({', '.join(names)})")
    return values


@contextlib.contextmanager
def _own_name(cls: type, base: type, name: str):
    """While the student's ``__init__`` runs, its own class's name means its own class again (so that
    ``super(RecurrentCell, self).__init__()`` reaches nn.Module, not the student's __init__ a second time)."""
    space = getattr(base.__init__, "__globals__", None)
    swapped = isinstance(space, dict) and space.get(name) is cls
    if swapped:
        space[name] = base
    try:
        yield
    finally:
        if swapped:
            space[name] = cls


def _declared_attributes(module: torch.nn.Module, sizes: dict) -> None:
    """A stand-in laid out without the student's ``__init__`` (it raised, ended the process or hung) holds the
    constructor's arguments under the names its declaration gives them (``input_dim``, ``hidden_dim``): what a
    correct class built on it may read (``self.cell.hidden_dim``). What the object already has is kept."""
    for attr, value in sizes.items():
        if attr in module.__dict__ or hasattr(type(module), attr):
            continue
        if any(attr in table for table in (module._parameters, module._buffers, module._modules)):
            continue
        module.__dict__[attr] = value


_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_CALLING = ("__call__", "_call_impl", "_wrapped_call_impl")  # how nn.Module reaches forward


def stand_in_class(name: str, spec: dict, stub: Callable, bases: dict | None = None) -> type:
    """A module laid out as ``spec`` says whose forward the grader answers (one class per spec and student class).

    Built around the student's own class of that name (``bases[name]``, when it is an nn.Module class): its
    ``__init__`` runs, so the attributes, helper methods and parameter-free children the student's other
    classes rely on are there; then the course's layout is imposed (the course's Linear layers under the
    course's names, each child a stand-in too, every other parameter or buffer of the state_dict dropped),
    hooks are removed, and ``forward`` is the grader's, called through nn.Module's own ``__call__``. A class
    whose ``__init__`` raises (not written yet) gets the layout alone, with the constructor's arguments as the
    attributes its declaration names (``_declared_attributes``)."""
    bases = bases or {}
    base = bases.get(name)
    base = base if isinstance(base, type) and issubclass(base, torch.nn.Module) else torch.nn.Module
    key = (json.dumps([name, spec], sort_keys=True), tuple(sorted((k, id(v)) for k, v in bases.items())))
    if key in _CLASSES:
        return _CLASSES[key][0]
    init = [str(p) for p in spec.get("init", [])]
    forward_params = [str(p) for p in spec.get("forward", [])]
    linears = [(str(a), str(i), str(o)) for a, i, o in spec.get("linears", [])]
    children = [(str(a), str(n), s, [str(p) for p in params]) for a, n, s, params in spec.get("children", [])]
    names = layout(spec)

    def __init__(self, *args, **kwargs):
        sizes = dict(
            zip(init, _bind(init, args, kwargs, f"{name}()", base.__init__ if base is not torch.nn.Module else None))
        )
        try:
            if base is torch.nn.Module:
                raise TypeError
            with _own_name(type(self), base, name):
                base.__init__(self, *args, **kwargs)
        except Exception:  # the student's __init__ is not written yet or fails: the course's layout alone
            torch.nn.Module.__init__(self)
            _declared_attributes(self, sizes)
        _impose(self, sizes)

    def _impose(self, sizes: dict) -> None:
        module_set = torch.nn.Module.__setattr__
        for attr, fan_in, fan_out in linears:
            have = self._modules.get(attr)
            if not (
                type(have) is torch.nn.Linear
                and have.bias is not None
                and tuple(have.weight.shape) == (int(sizes[fan_out]), int(sizes[fan_in]))
            ):
                module_set(self, attr, torch.nn.Linear(int(sizes[fan_in]), int(sizes[fan_out])))
        for attr, child, child_spec, params in children:
            kind = stand_in_class(child, child_spec, stub, bases)
            have, want = self._modules.get(attr), [int(sizes[p]) for p in params]
            if not (type(have) is kind and getattr(have, "_stand_in_sizes", None) == want):
                module_set(self, attr, kind(*want))
        for key in list(torch.nn.Module.state_dict(self)):
            if key not in names:  # not the course's layout: the part that holds it goes
                top = key.split(".", 1)[0]
                for table in (self._parameters, self._buffers, self._modules):
                    table.pop(top, None)
        for hooks in _HOOKS:
            if isinstance(getattr(self, hooks, None), dict):
                getattr(self, hooks).clear()
        self.__dict__["_stand_in_sizes"] = [int(sizes[p]) for p in init]

    def forward(self, *args, **kwargs):
        inputs = _bind(forward_params, args, kwargs, f"{name}.forward()", getattr(base, "forward", None))
        weights = [torch.nn.Module.get_parameter(self, n) for n in names]
        params = forward_params + [f"p{i}" for i in range(len(weights))]
        return stub(f"{name}.forward", params)(*inputs, *weights)

    body = {
        "__init__": __init__,
        "forward": forward,
        "__module__": __name__,
        "__qualname__": name,
        **{attr: getattr(torch.nn.Module, attr) for attr in _CALLING if hasattr(torch.nn.Module, attr)},
    }
    try:
        made = type(name, (base,), body)
    except Exception:  # a student class that cannot be subclassed: the layout alone
        made = type(name, (torch.nn.Module,), body)
    _CLASSES[key] = (made, dict(bases))  # the student's classes are kept alive with it (the key holds their ids)
    return made


def _named_classes(specs: dict) -> dict:
    """Every stand-in class a request names, with the classes their specs build as children."""
    found = {}
    for name, spec in specs.items():
        if isinstance(spec, dict):
            found[str(name)] = spec
            found.update(
                {
                    k: v
                    for k, v in _named_classes(
                        {str(c[1]): c[2] for c in spec.get("children", []) if isinstance(c, list) and len(c) == 4}
                    ).items()
                    if k not in found
                }
            )
    return found


@contextlib.contextmanager
def stand_in_classes(ns: dict, specs, stub: Callable, layout_only=None):
    """Bind each named class (and each class its spec builds as a child) to its stand-in in the student's
    namespace for the length of a request; the stand-ins are built around the student's classes found there,
    except those named in ``layout_only`` (their ``__init__`` ended the process or hung: the layout alone)."""
    named = _named_classes(specs) if isinstance(specs, dict) else {}
    alone = {str(n) for n in layout_only} if isinstance(layout_only, list) else set()
    bases = {name: None if name in alone else ns.get(name) for name in named}
    undo = []
    try:
        for name, spec in named.items():
            undo.append((name, ns.get(name, _MISSING)))
            ns[name] = stand_in_class(name, spec, stub, bases)
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
                    p.copy_(
                        torch.randn(p.shape, generator=generator, dtype=torch.float64).to(p.dtype) / max(fan, 1) ** 0.5
                    )
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
