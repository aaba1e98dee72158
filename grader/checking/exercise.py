"""What an assignment is made of: exercises, their checks and points (frozen, declared per assignment).

Each assignment declares its exercises in its own module under :mod:`grader.assignments`; points
there are the single source of truth: the notebook's autograded cells must carry the same points (a
test compares them), and ``seqgrade list`` prints them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from .standins import STAND_INS

JUDGES = ("reference", "format", "own")
# How a check's docstring opens the sentence that says when it cannot be decided (Check.undecidable).
UNDECIDABLE = ("Not judged when", "Always judged")


@dataclass(frozen=True)
class Check:
    func: Callable
    points: float
    hint: str = ""  # for wrong values; other kinds of failure get hints of their own (checks.base.KIND_HINTS)
    # "reference": compares values with the reference; "format": compares only types, shapes and dtypes
    # with it; "own": a property of the student's own function. After the first failure of a reference or
    # format check, another one's failure says "not judged" instead of repeating the difference; no check
    # pays when the exercise's probe finds that the function does no real work, and format and own
    # checks are not even run then. The function's docstring ends with a sentence saying when the check
    # cannot be judged (``undecidable``).
    judges: str = "reference"
    hints: Mapping[str, str] = field(default_factory=dict)  # failure kind -> hint, overriding the defaults

    def __post_init__(self):
        if self.judges not in JUDGES:
            raise ValueError(f"{self.name}: judges must be one of {JUDGES}; got {self.judges!r}")

    @property
    def gated(self) -> bool:
        return self.judges in ("format", "own")

    @property
    def name(self) -> str:
        return self.func.__name__

    @property
    def undecidable(self) -> str:
        """The sentence of the check's docstring that says which failures leave it undecidable ("not
        judged"), or that none do; "" when the docstring does not say."""
        text = " ".join((self.func.__doc__ or "").split())
        for opening in UNDECIDABLE:
            at = text.find(opening)
            if at >= 0:
                end = text.find(". ", at)
                return text[at:] if end < 0 else text[at:end + 1]
        return ""

    @property
    def property(self) -> str:
        return (self.func.__doc__ or "").strip().splitlines()[0]


@dataclass(frozen=True)
class Exercise:
    id: str  # the function or answer variable the student defines; also the notebook's grade_id
    kind: str  # "function", "answer" or "manual"
    checks: tuple[Check, ...] = ()
    manual_points: float = 0.0
    # Other student functions this exercise's function calls: each is replaced by a grader-served
    # stand-in while it is graded (grader.checking.standins), and must be graded earlier in the assignment.
    requires: tuple[str, ...] = ()
    # Says whether the student's function does real work (grader.checking.gate.Probe: on cases drawn like the
    # checks' own it must not raise every time, return zeros, a constant or an input, or ignore one of its
    # main inputs); when it does not, no check of the exercise pays.
    probe: Callable | None = None
    # CPU seconds one call of this function may use, for functions whose honest calls are heavier than
    # the default budget allows for (Limits.call_cpu_s, which is the least any function gets).
    call_cpu_s: float | None = None

    @property
    def inputs(self) -> dict:
        """The main inputs the function must respond to, as its probe declares them: {position: name},
        a position being an argument's index or (index, key) for an entry of a dict argument."""
        return dict(getattr(self.probe, "inputs", None) or {})

    @property
    def points(self) -> float:
        return self.manual_points if self.kind == "manual" else sum(c.points for c in self.checks)


@dataclass(frozen=True)
class Assignment:
    id: str
    notebook: str
    exercises: tuple[Exercise, ...]
    modules: tuple[str, ...] = ()  # helper modules shipped beside the notebook (imported, inert, when grading)

    @property
    def call_budgets(self) -> dict[str, float]:
        """The functions that declare their own CPU budget per call, and the budget."""
        return {e.id: e.call_cpu_s for e in self.exercises if e.call_cpu_s is not None}

    def __post_init__(self):
        seen: set[str] = set()
        for e in self.exercises:
            missing = [r for r in e.requires if r not in seen or r not in STAND_INS]
            if missing:
                raise ValueError(f"{self.id}.{e.id} requires {missing}: each must be an earlier exercise with a stand-in")
            seen.add(e.id)

    @property
    def max_score(self) -> float:
        return sum(e.points for e in self.exercises)

    def exercise(self, exercise_id: str) -> Exercise:
        for e in self.exercises:
            if e.id == exercise_id:
                return e
        raise KeyError(f"{self.id} has no exercise {exercise_id!r}")

    def check_property(self, exercise_id: str, check_name: str) -> str:
        """The property sentence of one check, as `seqgrade list` prints it ("" when there is no such check)."""
        try:
            exercise = self.exercise(exercise_id)
        except KeyError:
            return ""
        return next((c.property for c in exercise.checks if c.name == check_name), "")
