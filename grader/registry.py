"""The exercise registry: every assignment the course has, by id.

Each assignment declares its exercises, checks and points in its own module under
:mod:`grader.assignments` (a module ``<id>.py`` defining ``ASSIGNMENT``); this module only collects
them, in the order the course teaches them.
"""
from __future__ import annotations

import importlib
import pkgutil

from . import assignments as _package
from .errors import UnknownAssignment
from .exercise import JUDGES, Assignment, Check, Exercise  # noqa: F401  (re-exported)

COURSE_ORDER = ("sequence_models", "attention", "recursive_attention", "rnn_lm")


def _collect() -> dict[str, Assignment]:
    found = {}
    for info in pkgutil.iter_modules(_package.__path__):
        assignment = getattr(importlib.import_module(f"{_package.__name__}.{info.name}"), "ASSIGNMENT", None)
        if isinstance(assignment, Assignment):
            if assignment.id != info.name:  # assignment_ids() lists the modules' names without importing them
                raise ValueError(f"grader/assignments/{info.name}.py declares assignment {assignment.id!r}; "
                                 f"name the module after its assignment")
            found[assignment.id] = assignment
    rank = {name: i for i, name in enumerate(COURSE_ORDER)}
    return {k: found[k] for k in sorted(found, key=lambda k: (rank.get(k, len(rank)), k))}


ASSIGNMENTS: dict[str, Assignment] = _collect()
SEQUENCE_MODELS = ASSIGNMENTS["sequence_models"]


def get_assignment(name: str) -> Assignment:
    try:
        return ASSIGNMENTS[name]
    except KeyError:
        raise UnknownAssignment(name, sorted(ASSIGNMENTS)) from None
