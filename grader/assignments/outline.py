"""An assignment's declaration as plain data, for the processes that write outputs without grading.

Loading a declaration imports the assignment's checks, its references and torch: about 1.2 s of CPU. A
batch's own process does not grade (its workers do) but writes grades.csv, the pages, the summary and the
gradebook, and for those it needs only what the declaration says: the exercises, their kinds and points,
their checks' names, points and docstrings (the property sentence), the references' parameter names. So a
process that loads a declaration (:mod:`grader.assignments.registry`) writes this outline of it into the
cache folder (:func:`grader.fsutil.cache_folder`), under a digest of the source of ``grader/`` and
``reference/``, and a later process reads it back as an :class:`Assignment` whose callables are
placeholders that refuse to run (a check, a reference, a stand-in). Any change to that source starts a new
file, so an outline never describes other code than the one running.

Imports nothing heavy.
"""

from __future__ import annotations

import functools
import inspect
import json
from pathlib import Path

from grader.checking.calls import StandInClass
from grader.checking.exercise import Assignment, Check, Exercise
from grader.fsutil import cache_folder, source_digest, write_atomic

FORMAT = 1
_PROJECT = Path(__file__).resolve().parents[2]


@functools.cache
def _source() -> str:
    """A digest of the source an outline describes (once per process: about 25 ms)."""
    return source_digest(_PROJECT, ("grader", "reference"))[:24]


def path(assignment_id: str) -> Path | None:
    """Where the outline of ``assignment_id`` for the source as it is now is kept (None: no cache folder)."""
    folder = cache_folder()
    return None if folder is None else folder / f"outline-{_source()}-{assignment_id}.json"


def to_data(assignment: Assignment) -> dict:
    """What the outline keeps of a declaration (versioned JSON-ready data)."""
    return {
        "format": FORMAT,
        "id": assignment.id,
        "notebook": assignment.notebook,
        "modules": list(assignment.modules),
        "exercises": [_exercise_data(e) for e in assignment.exercises],
    }


def _exercise_data(e: Exercise) -> dict:
    return {
        "id": e.id,
        "kind": e.kind,
        "manual_points": e.manual_points,
        "requires": list(e.requires),
        "call_cpu_s": e.call_cpu_s,
        "bonus": e.bonus,
        "reference": None
        if e.reference is None
        else {"name": getattr(e.reference, "__name__", e.id), "parameters": list(e.argument_names)},
        "stand_in_class": isinstance(e.stand_in, StandInClass),
        "checks": [
            {
                "name": c.name,
                "doc": c.func.__doc__,
                "points": c.points,
                "hint": c.hint,
                "judges": c.judges,
                "hints": dict(c.hints),
            }
            for c in e.checks
        ],
    }


def from_data(data: dict) -> Assignment:
    """The Assignment an outline describes; ValueError when ``data`` is not an outline of this format."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"not an assignment outline of format {FORMAT}")
    exercises = []
    for e in data["exercises"]:
        reference = e["reference"]
        exercises.append(
            Exercise(
                e["id"],
                e["kind"],
                tuple(
                    Check(_placeholder(c["name"], c["doc"]), c["points"], c["hint"], c["judges"], c["hints"])
                    for c in e["checks"]
                ),
                manual_points=e["manual_points"],
                requires=tuple(e["requires"]),
                call_cpu_s=e["call_cpu_s"],
                bonus=e["bonus"],
                reference=None if reference is None else _placeholder(reference["name"], None, reference["parameters"]),
                stand_in=StandInClass(e["id"], {}, None) if e["stand_in_class"] else None,
            )
        )
    return Assignment(
        id=data["id"], notebook=data["notebook"], exercises=tuple(exercises), modules=tuple(data["modules"])
    )


def read(assignment_id: str) -> Assignment | None:
    """The outline kept for ``assignment_id`` and the source as it is now, or None."""
    where = path(assignment_id)
    if where is None:
        return None
    try:
        outlined = from_data(json.loads(where.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return outlined if outlined.id == assignment_id else None


def write(assignment: Assignment) -> None:
    """Keep the outline of a declaration just loaded (once per source; a folder that cannot be written only
    costs the next process the import)."""
    try:
        where = path(assignment.id)
        if where is not None and not where.exists():
            write_atomic(where, json.dumps(to_data(assignment), indent=1))
    except OSError:
        pass


def _placeholder(name: str, doc: str | None, parameters: list[str] | None = None):
    """A function named ``name`` with docstring ``doc`` and these parameters, which refuses to be called."""

    def outlined(*args, **kwargs):
        raise RuntimeError(f"{name} is only outlined in this process: the assignment's checks were not loaded")

    outlined.__name__ = outlined.__qualname__ = name
    outlined.__doc__ = doc
    if parameters is not None:
        outlined.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in parameters]
        )
    return outlined
