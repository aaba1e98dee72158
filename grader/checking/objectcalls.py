"""Objects by handle, on the grader's side: construct a student class in the student's process, call its
methods, read and load its parameters (grader.jail.objects is the student's side). Shared by every backend
and by views with stand-ins: each builds on the backend's ``call``."""

from __future__ import annotations

import itertools
from typing import Mapping, Sequence

from .calls import Reply, StandInClass, StandInHandler

_HANDLES = itertools.count(1)


class ObjectCalls:
    """``construct``, ``call_method``, ``state`` and ``load`` for anything with the backends' ``call``."""

    def construct(
        self,
        name: str,
        args: Sequence,
        *,
        classes: Mapping[str, StandInClass] | None = None,
        stand_ins: Mapping[str, StandInHandler] | None = None,
    ) -> str:
        """Construct ``name(*args)`` in the student's process (with the given stand-in classes bound while
        its ``__init__`` runs); return the handle that addresses the object from now on."""
        handle = f"{name}#{next(_HANDLES)}"
        self.call(name, list(args), op="construct", handle=handle, classes=classes, stand_ins=stand_ins)
        if classes:  # its stand-in parts ask the grader on every later call too
            self.__dict__.setdefault("_object_classes", {})[handle] = dict(classes)
        return handle

    def build(
        self,
        name: str,
        args: Sequence,
        *,
        classes: Mapping[str, StandInClass] | None = None,
        double: bool = False,
        fill_seed: int | None = None,
    ) -> tuple[str, dict]:
        """Construct ``name(*args)`` and, in the same request, convert it to float64 (``double``) and fill its
        parameters from ``fill_seed`` (grader.jail.objects.prepared); return the handle and the shapes of its
        state_dict by name."""
        handle = f"{name}#{next(_HANDLES)}"
        prepare = {"double": double, "fill_seed": fill_seed}
        shapes = self.call(name, list(args), op="construct", handle=handle, classes=classes, prepare=prepare).value
        if classes:
            self.__dict__.setdefault("_object_classes", {})[handle] = dict(classes)
        return handle, shapes if isinstance(shapes, dict) else {}

    def call_method(self, name: str, handle: str, args: Sequence, *, method: str = "__call__", **options) -> Reply:
        """Call ``method`` of the object under ``handle`` (``name``: its class, for budgets and messages)."""
        classes = {**self.__dict__.get("_object_classes", {}).get(handle, {}), **(options.pop("classes", None) or {})}
        return self.call(name, list(args), handle=handle, method=method, classes=classes or None, **options)

    def state(self, name: str, handle: str) -> dict:
        """The tensors of the object's ``state_dict()``, by parameter name."""
        value = self.call(name, [], op="state", handle=handle).value
        return value if isinstance(value, dict) else {}

    def load(self, name: str, handle: str, tensors: dict) -> None:
        """``load_state_dict(tensors, strict=True)`` on the object; raises what the student's module raised."""
        self.call(name, [tensors], op="load", handle=handle)
