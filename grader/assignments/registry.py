"""The exercise registry: every assignment the course has, by id.

Each assignment declares its exercises, checks and points in its own package under
:mod:`grader.assignments` (``<id>/__init__.py`` defining ``ASSIGNMENT``); this module only collects
them, in the order the course teaches them, importing each when it is first asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from grader import assignments as _package
from grader.checking.exercise import JUDGES, Assignment, Check, Exercise  # noqa: F401  (re-exported)
from grader.errors import UnknownAssignment

from . import assignment_ids
from . import outline as _outline

COURSE_ORDER = ("sequence_models", "attention", "recursive_attention", "rnn_lm", "lm_modules")


def _load(name: str) -> Assignment:
    assignment = getattr(importlib.import_module(f"{_package.__name__}.{name}"), "ASSIGNMENT", None)
    if not isinstance(assignment, Assignment):
        raise ValueError(f"grader/assignments/{name}/__init__.py defines no ASSIGNMENT")
    if assignment.id != name:  # assignment_ids() lists the modules' names without importing them
        raise ValueError(
            f"grader/assignments/{name}/__init__.py declares assignment {assignment.id!r}; "
            f"name the package after its assignment"
        )
    _outline.write(assignment)  # for the processes that only write outputs (grader.assignments.outline)
    return assignment


class _Registry(Mapping):
    """The course's assignments by id, in course order. Each one's module (its checks and references) is
    imported when it is first asked for: grading one notebook imports no other assignment's checks."""

    def __init__(self):
        rank = {name: i for i, name in enumerate(COURSE_ORDER)}
        self._ids = sorted(assignment_ids(), key=lambda k: (rank.get(k, len(rank)), k))
        self._loaded: dict[str, Assignment] = {}

    def __getitem__(self, name: str) -> Assignment:
        if name not in self._loaded:
            if name not in self._ids:
                raise KeyError(name)
            self._loaded[name] = _load(name)
        return self._loaded[name]

    def loaded(self, name: str) -> Assignment | None:
        return self._loaded.get(name)

    def __contains__(self, name) -> bool:
        return name in self._ids

    def __iter__(self):
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


ASSIGNMENTS: Mapping[str, Assignment] = _Registry()


def __getattr__(name: str):
    if name == "SEQUENCE_MODELS":  # loaded when asked for: importing the registry imports no checks (nor torch)
        return ASSIGNMENTS["sequence_models"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_assignment(name: str) -> Assignment:
    try:
        return ASSIGNMENTS[name]
    except KeyError:
        raise UnknownAssignment(name, sorted(ASSIGNMENTS)) from None


def get_outline(name: str) -> Assignment:
    """Assignment ``name`` as far as a process that writes outputs without grading needs it: the declaration
    when this process has loaded it, else its outline (grader.assignments.outline: placeholders instead of
    the checks, read without importing them), else the declaration, loaded now."""
    if name not in ASSIGNMENTS:
        raise UnknownAssignment(name, sorted(ASSIGNMENTS))
    return ASSIGNMENTS.loaded(name) or _outline.read(name) or get_assignment(name)
