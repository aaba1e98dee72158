"""What an assignment is made of: exercises, their checks and points (frozen, declared per assignment).

Each assignment declares its exercises in its own package under :mod:`grader.assignments`, and the
declaration is the only place an exercise is named: its points (the notebook's autograded cells must
carry the same, a test compares them, and ``seqgrade list`` prints them), its reference function or
class (whose signature names the arguments in messages and in the notebook's stub), what serves it while
other exercises are graded (the reference, or a declared stand-in) and what serving it costs.
``tests/test_declarations.py`` checks every declared exercise of the course for each of these, and for the
demo's sample cells (``grader/assignments/<id>/samples.py``).
"""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from grader.results import ExerciseResult

from .calls import StandInClass

if TYPE_CHECKING:
    from .standins import StandIn

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
    # The outputs of a tuple result the check judges (None: all). Where the probe finds that some output does
    # no real work (Probe.per_output: a placeholder, or an output that ignores an input), a check of the
    # other outputs only is still paid: half the work keeps the points of the half that is right.
    outputs: tuple[int, ...] | None = None

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
                return text[at:] if end < 0 else text[at : end + 1]
        return ""

    @property
    def property(self) -> str:
        """The sentence students read: the docstring's first paragraph, its lines joined by single spaces."""
        return " ".join(re.split(r"\n\s*\n", (self.func.__doc__ or "").strip())[0].split())


@dataclass(frozen=True)
class Exercise:
    id: str  # the function, class or answer variable the student defines; also the notebook's grade_id
    kind: str  # "function", "class", "answer" or "manual"
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
    # A bonus: its points are earned on top of the assignment's maximum and never count in it (max_score, the
    # points of its nbgrader cell), so a student who leaves it undone loses nothing.
    bonus: bool = False
    # Why none of its checks can be judged on this grading machine (an optional package it needs is missing),
    # or None; asked each time it is graded. Its checks are then "not judged" and pay nothing.
    unjudgeable: Callable[[], str | None] | None = None
    # The course's own function (or class): its parameters name the arguments in failure messages and must
    # be the notebook stub's; while another exercise is graded, the grader answers calls to it with it.
    reference: Callable | None = None
    # What answering one call costs, estimated from the arguments before computing it (the assignment's
    # costs.py, or grader.checking.standin_costs; generic_cost is a choice to state, not a default).
    cost: Callable | None = None
    # What answers for it where another exercise ``requires`` it, when that must not be the reference (a
    # function with the reference's parameters; for a class, a StandInClass). None: the reference.
    stand_in: Callable | StandInClass | None = None
    # The assignment that declares it (set by Assignment): where the exercises it requires are found.
    assignment: Assignment | None = field(default=None, compare=False, repr=False)

    @property
    def argument_names(self) -> tuple[str, ...]:
        """The names of the reference's parameters (a class: its constructor's), () without a reference."""
        return _parameter_names(self.reference) if self.reference is not None else ()

    @property
    def served(self) -> StandIn | None:
        """The course's own function answering for this one while another exercise is graded (None for
        anything but a function exercise with a reference)."""
        if self.kind != "function" or self.reference is None:
            return None
        from .standins import stand_in  # torch: only where the exercise is graded, not where it is outlined

        return stand_in(self.id, self.reference, self.reference, self.cost)

    @property
    def required_stand_in(self) -> StandIn | StandInClass | None:
        """What answers for this exercise where another one ``requires`` it: the declared stand-in, else
        the course's own function."""
        if isinstance(self.stand_in, StandInClass):
            return self.stand_in
        if not self.stands_in:
            return None
        from .standins import stand_in

        return stand_in(self.id, self.stand_in or self.reference, self.reference, self.cost)

    @property
    def stands_in(self) -> bool:
        """Whether something answers for it where another exercise ``requires`` it (required_stand_in is not
        None), said without building it."""
        return isinstance(self.stand_in, StandInClass) or (self.reference is not None and self.kind == "function")

    def stand_ins(self, others: Sequence[str] = ()) -> dict[str, StandIn]:
        """What answers the student's other functions while this one is graded: each graded function of the
        assignment named in ``others`` is served as the course's own (its reference), and each one this
        exercise ``requires`` by the stand-in its declaration gives."""
        declared = {e.id: e for e in (self.assignment.exercises if self.assignment is not None else ())}
        table = {
            name: handler
            for name in others
            if name != self.id and name in declared and (handler := declared[name].served) is not None
        }
        from .standins import StandIn

        for name in self.requires:
            found = declared[name].required_stand_in if name in declared else None
            if not isinstance(found, StandIn):
                raise ValueError(f"{self.id} requires {name!r}, which its assignment declares no function stand-in for")
            table[name] = found
        return table

    @property
    def inputs(self) -> dict:
        """The main inputs the function must respond to, as its probe declares them: {position: name},
        a position being an argument's index or (index, key) for an entry of a dict argument."""
        return dict(getattr(self.probe, "inputs", None) or {})

    @property
    def points(self) -> float:
        return self.manual_points if self.kind == "manual" else sum(c.points for c in self.checks)

    @property
    def max_points(self) -> float:
        """What it adds to the assignment's maximum: its points, or 0 for a bonus."""
        return 0.0 if self.bonus else self.points


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
        earlier: dict[str, Exercise] = {}
        for e in self.exercises:
            missing = [r for r in e.requires if r not in earlier or not earlier[r].stands_in]
            if missing:
                raise ValueError(
                    f"{self.id}.{e.id} requires {missing}: each must be an earlier exercise with a "
                    f"reference or a stand-in"
                )
            earlier[e.id] = e
        # each exercise knows its assignment, where the exercises it requires (and the others) are found
        object.__setattr__(self, "exercises", tuple(replace(e, assignment=self) for e in self.exercises))

    @functools.cached_property
    def argument_names(self) -> dict[str, tuple[str, ...]]:
        """The parameter names of every exercise with a reference, by exercise id (for failure messages)."""
        return {e.id: e.argument_names for e in self.exercises if e.reference is not None}

    @property
    def max_score(self) -> float:
        """The points that make a full score; bonus points come on top."""
        return sum(e.max_points for e in self.exercises)

    @property
    def bonus_points(self) -> float:
        """The points of its bonus exercises, earned on top of ``max_score``."""
        return sum(e.points for e in self.exercises if e.bonus)

    def exercise(self, exercise_id: str) -> Exercise:
        for e in self.exercises:
            if e.id == exercise_id:
                return e
        raise KeyError(f"{self.id} has no exercise {exercise_id!r}")

    def described(self, results: Sequence[ExerciseResult]) -> tuple[ExerciseResult, ...]:
        """``results`` with each check's property sentence filled in from the declaration."""
        return tuple(
            replace(r, checks=tuple(replace(c, sentence=self.check_property(r.id, c.name)) for c in r.checks))
            for r in results
        )

    def check_property(self, exercise_id: str, check_name: str) -> str:
        """The property sentence of one check, as `seqgrade list` prints it ("" when there is no such check)."""
        try:
            exercise = self.exercise(exercise_id)
        except KeyError:
            return ""
        return next((c.property for c in exercise.checks if c.name == check_name), "")


def _parameter_names(obj) -> tuple[str, ...]:
    try:
        return tuple(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return ()
