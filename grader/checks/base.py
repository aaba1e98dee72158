"""The check runner: a check is a function ``check_<property>(student)`` that raises to fail.

``for_all`` runs a property over hypothesis examples with fixed settings (derandomized, no database,
no deadline), so the same student code always meets the same inputs and shrinks to the same
smallest counterexample. ``run_check`` turns whatever a check raised into a :class:`CheckResult`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from hypothesis import HealthCheck, Phase, Verbosity, example, given, settings
from hypothesis.errors import Flaky

from ..calls import Reply, StudentAborted, StudentCode, StudentMissing, StudentRaised
from ..compare import describe
from ..results import CheckResult

GRADING_SETTINGS = settings(
    max_examples=12,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    report_multiple_bugs=False,
    verbosity=Verbosity.quiet,
    phases=(Phase.explicit, Phase.generate, Phase.shrink),
    suppress_health_check=list(HealthCheck),
)


class CheckFailed(AssertionError):
    """The property does not hold; ``message`` is written for the student."""

    def __init__(self, message: str, figure: dict | None = None):
        super().__init__(message)
        self.message, self.figure = message, figure


class StudentErrorAt(Exception):
    """The student's function raised on a particular input; the message names the call."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Passed:
    """What a check may return on success: an optional figure for the report."""

    figure: dict | None = None


def format_call(name: str, args) -> str:
    return f"{name}(" + ", ".join(describe(a) for a in args) + ")"


def call(student: StudentCode, name: str, *args, **options) -> Reply:
    """Call a student function; an exception it raises becomes StudentErrorAt naming the input."""
    try:
        return student.call(name, list(args), **options)
    except StudentRaised as exc:
        where = f" ({exc.where})" if exc.where else ""
        raise StudentErrorAt(f"{format_call(name, args)} raised {exc.type_name}: {exc.message}{where}") from None


def expect_value_error(student: StudentCode, name: str, args: tuple, why: str) -> None:
    """The call must raise ValueError; any other exception fails, NotImplementedError is an error."""
    try:
        got = call(student, name, *args).value
    except StudentErrorAt as exc:
        if "raised NotImplementedError" in exc.message:
            raise
        if "raised ValueError" not in exc.message:
            raise CheckFailed(f"{exc.message}; expected a ValueError") from None
        return
    raise CheckFailed(f"{format_call(name, args)} returned {describe(got)}; expected a ValueError, {why}")


def fail_if(message: str | None, context: str = "") -> None:
    if message is not None:
        raise CheckFailed(f"{context}{message}" if not context else f"{context}: {message}")


def for_all(strategy, prop: Callable, *, max_examples: int = 12, examples: tuple = ()) -> None:
    """Run ``prop`` on the explicit ``examples`` and then on drawn ones; raise the smallest failure."""

    @settings(GRADING_SETTINGS, max_examples=max_examples)
    @given(strategy)
    def property_holds(case):
        prop(case)

    for case in reversed(examples):
        property_holds = example(case)(property_holds)
    property_holds()


def run_check(name: str, func: Callable[[StudentCode], object], points: float, student: StudentCode,
              hint: str = "") -> CheckResult:
    """Run one check against the student's code and record its verdict."""

    def result(status: str, message: str = "", figure: dict | None = None) -> CheckResult:
        if status != "passed" and hint:
            message = f"{message}\nHint: {hint}"
        return CheckResult(name=name, status=status, points=points if status == "passed" else 0.0,
                           max_points=points, message=message, figure=figure)

    try:
        outcome = func(student)
    except CheckFailed as exc:
        return result("failed", exc.message, exc.figure)
    except StudentErrorAt as exc:
        return result("error", exc.message)
    except StudentMissing as exc:
        return result("missing", f"{exc.name} is not defined in the notebook" + (f": {exc.detail}" if exc.detail else ""))
    except StudentAborted as exc:
        return result(exc.status, exc.message)
    except Flaky:
        return result("failed", "gave different answers when called twice with the same input; "
                                "results must not depend on hidden state or randomness")
    except Exception as exc:  # a fault in the check itself, not the student's
        return result("error", f"seqgrade could not finish this check ({type(exc).__name__}: {exc}); please tell course staff")
    figure = outcome.figure if isinstance(outcome, Passed) else None
    return result("passed", "", figure)
