"""The check runner: a check is a function ``check_<property>(student)`` that raises to fail.

``for_all`` runs a property over hypothesis examples with fixed settings (derandomized, no database,
no deadline), so the same student code always meets the same inputs and shrinks to the same
smallest counterexample. ``run_check`` turns whatever a check raised into a :class:`CheckResult`.
"""

from __future__ import annotations

import copy
import importlib
import sys
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable, Mapping

from grader.results import CheckResult

from . import drawn
from .calls import Reply, StudentAborted, StudentCode, StudentMissing, StudentRaised
from .compare import ATOL, RTOL, compare_arrays, describe
from .reproduce import RERUN_HINT, with_call
from .strategies import Later, resolve


def _hypothesis():
    return importlib.import_module("hypothesis")


# hypothesis is imported when a check first draws or searches (see strategies.Later): a process that
# replays stored cases on a notebook that passes never imports it.
settings, given, example, reject = (
    Later(lambda name=name: getattr(_hypothesis(), name)) for name in ("settings", "given", "example", "reject")
)


def _grading_settings():
    h = _hypothesis()
    return h.settings(
        max_examples=12,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        report_multiple_bugs=False,
        verbosity=h.Verbosity.quiet,
        phases=(h.Phase.explicit, h.Phase.generate, h.Phase.shrink),
        suppress_health_check=list(h.HealthCheck),
    )


GRADING_SETTINGS = Later(_grading_settings)


def _hypothesis_error(exc: BaseException, name: str) -> bool:
    """``exc`` is hypothesis's error ``name`` (False when hypothesis was never imported)."""
    errors = sys.modules.get("hypothesis.errors")
    return errors is not None and isinstance(exc, getattr(errors, name))


# A hint for each kind of failure that does not depend on the exercise; a check's own hint is for
# wrong values and lost precision (and for the kinds it names in ``Check.hints``).
KIND_HINTS = {
    "raised": RERUN_HINT,
    "type": "Return exactly the kind of object the exercise asks for (a torch tensor, an ndarray, an int...).",
    "shape": "Print the shapes of your intermediate results for the input shown and compare them with the exercise's.",
    "dtype": "Create new tensors and arrays with the input's dtype (dtype=x.dtype) instead of the default.",
    "precision": "Compute in the inputs' dtype throughout: make new tensors with dtype=x.dtype (or x.new_zeros(...)) "
    "and never convert a float64 input to float32 (.float()) on the way.",
    "not_differentiable": "Use torch operations on the inputs only: no .detach(), .numpy(), .item() or "
    "torch.tensor(...) on intermediate results.",
    "timeout": "Look for a loop that never ends or work that grows much faster than the input.",
    "resources": "Call the helper functions on pieces the size of your inputs (one block, one step), not on "
    "something far larger than the input you were given.",
}


class CheckFailed(AssertionError):
    """The property does not hold; ``message`` is written for students, ``kind`` names the failure."""

    def __init__(self, message: str, figure: dict | None = None, *, kind: str = "values", hint: str | None = None):
        super().__init__(message)
        self.message, self.figure, self.kind, self.hint = message, figure, kind, hint


class NotJudged(CheckFailed):
    """The property cannot be judged on this answer (it is degenerate, or the values are already wrong)."""

    def __init__(self, message: str, *, kind: str = "degenerate"):
        super().__init__(f"not judged: {message}", kind=kind)


class StudentErrorAt(Exception):
    """The student's function raised on a particular input; the message names the call."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Passed:
    """What a check may return on success: an optional figure for the report."""

    figure: dict | None = None


class Lazy:
    """Text built only if it is shown: a failure's context costs nothing on the examples that pass."""

    __slots__ = ("_make", "_text")

    def __init__(self, make: Callable[[], object]):
        self._make, self._text = make, None

    def __str__(self) -> str:
        if self._text is None:
            self._text = str(self._make())
        return self._text

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __add__(self, other) -> "Lazy":
        return Lazy(lambda: str(self) + str(other))

    def __radd__(self, other) -> "Lazy":
        return Lazy(lambda: str(other) + str(self))


# The calls a running check has named in text (format_call), latest last: when the check fails, the
# latest one its message names gets its arguments and a reproduction snippet appended (run_check).
_NAMED_CALLS: ContextVar[list | None] = ContextVar("named_calls", default=None)


def format_call(name: str, args) -> str:
    """``name(X, W)`` with the parameters' names; the values are appended to the message on failure."""
    from .reproduce import argument_names

    args = tuple(args)
    text = f"{name}({', '.join(argument_names(name, len(args)))})"
    named = _NAMED_CALLS.get()
    if named is not None:
        named.append((text, name, args))
        del named[:-16]
    return text


def _with_arguments(message: str, named: list, stand_ins=()) -> str:
    """``message`` followed by the arguments of the latest named call it mentions, and a snippet."""
    for text, name, args in reversed(named):
        if text in message:
            try:
                return with_call(message, name, args, stand_ins)
            except Exception:  # the extra text must never cost the verdict itself
                return message
    return message


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


def fail_if(message: str | None, context: str = "", *, hint: str | None = None) -> None:
    """Raise CheckFailed with ``message`` (a :class:`grader.checking.compare.Mismatch` gives its kind) after
    ``context``."""
    if message is not None:
        raise CheckFailed(
            f"{context}: {message}" if context else message, kind=getattr(message, "kind", "values"), hint=hint
        )


class Skip(Exception):
    """Raised by a property for an example it cannot judge (the answer does no work on that input)."""


# Examples drawn once per process and check (or read from the store of an earlier process, see
# checks.drawn), replayed for every student (see for_all). REPLAY = False makes every check run
# hypothesis directly (the tests compare the two ways).
_DRAWN: dict[tuple, list] = {}
REPLAY = True


def for_all(
    strategy, prop: Callable, *, max_examples: int = 12, examples: tuple = (), unjudged: str = "", key: str = ""
) -> None:
    """Run ``prop`` on the explicit ``examples`` and then on drawn ones; raise the smallest failure.

    The cases hypothesis would try on a passing answer do not depend on the answer (the settings are
    derandomized), so they are drawn once per process and check and replayed directly; hypothesis
    itself runs, with its search and shrinking, only when a replayed case fails or is skipped, and then
    gives exactly the verdict and smallest counterexample it would have given on its own.

    A property raises :class:`Skip` for an example it cannot judge; when every example was skipped,
    the check is not judged (``unjudged`` says why) and pays nothing. ``key`` tells apart the cases of one
    property function used with several strategies (drawn cases are kept under the property's code)."""
    judged: list = []
    recording: list | None = None

    @settings(GRADING_SETTINGS, max_examples=max_examples)
    @given(strategy)
    def property_holds(case):
        if recording is not None:
            recording.append(case)
            return
        try:
            prop(copy.deepcopy(case))
        except Skip:
            reject()
        judged.append(True)

    for case in reversed(examples):
        property_holds = example(case)(property_holds)
    key = (prop.__code__, max_examples, len(examples), key)
    if REPLAY and key not in _DRAWN:
        stored_as = drawn.key_of(*key)
        stored = drawn.store().get(stored_as)
        if stored is None:
            recording = []
            resolve(property_holds)()
            stored, recording = recording, None
            drawn.store().put(stored_as, stored)
        _DRAWN[key] = stored
    try:
        for case in _DRAWN.get(key, ()) if REPLAY else ():
            prop(copy.deepcopy(case))
        if REPLAY:
            return
    except Exception:  # a failure or a skipped case: let hypothesis find it again, and shrink it
        judged.clear()
    try:
        resolve(property_holds)()
    except Exception as exc:
        if not _hypothesis_error(exc, "Unsatisfiable"):
            raise
        judged.clear()
    if not judged:
        raise NotJudged(unjudged or "no example could be judged", kind="degenerate")


def drawn_cases(strategy, count: int, key: str) -> list:
    """``count`` cases drawn from ``strategy`` exactly as :func:`for_all` draws a check's (derandomized,
    stored under ``key``), for a caller that needs the cases themselves (the gate's probes)."""
    cache_key = (key, count)
    if cache_key not in _DRAWN:
        stored_as = f"{key}:{count}"
        stored = drawn.store().get(stored_as)
        if stored is None:
            recording: list = []

            @settings(GRADING_SETTINGS, max_examples=count)
            @given(strategy)
            def record(case):
                recording.append(case)

            resolve(record)()
            stored = recording[:count]
            drawn.store().put(stored_as, stored)
        _DRAWN[cache_key] = stored
    return copy.deepcopy(_DRAWN[cache_key])


def run_check(
    name: str,
    func: Callable[[StudentCode], object],
    points: float,
    student: StudentCode,
    hint: str = "",
    hints: Mapping[str, str] | None = None,
) -> CheckResult:
    """Run one check against the student's code and record its verdict, its failure kind and a hint
    chosen for that kind (the check's own diagnosis first, then ``hints``, then ``hint`` for wrong values or
    lost precision, else the kind's own)."""

    named: list = []

    def result(
        status: str, message: str = "", figure: dict | None = None, kind: str = "", diagnosed: str | None = None
    ) -> CheckResult:
        if status != "passed":
            chosen = (
                diagnosed
                or (hints or {}).get(kind)
                or (hint if kind in ("values", "precision") else KIND_HINTS.get(kind, ""))
            )
            if chosen:
                message = f"{message}\nHint: {chosen}"
            # only the stand-ins the grader actually answered during this check are mentioned
            message = _with_arguments(message, named, sorted(getattr(student, "served", None) or ()))
        return CheckResult(
            name=name,
            status=status,
            points=points if status == "passed" else 0.0,
            max_points=points,
            message=message,
            figure=figure,
            kind=kind if status != "passed" else "",
        )

    token = _NAMED_CALLS.set(named)
    if hasattr(student, "begin"):
        student.begin()  # a view with stand-ins starts counting what it serves for this check
    try:
        outcome = func(student)
    except CheckFailed as exc:
        return result("failed", exc.message, exc.figure, exc.kind, exc.hint)
    except StudentErrorAt as exc:
        return result("error", exc.message, kind="raised")
    except StudentMissing as exc:
        return result(
            "missing",
            f"{exc.name} is not defined in the notebook" + (f": {exc.detail}" if exc.detail else ""),
            kind="missing",
        )
    except StudentAborted as exc:
        return result(exc.status, exc.message, kind=exc.kind)
    except Exception as exc:
        if _hypothesis_error(exc, "Flaky"):
            return result(
                "failed",
                "gave different answers when called twice with the same input; "
                "results must not depend on hidden state or randomness",
                kind="values",
            )
        # a fault in the check itself, not the student's
        return result(
            "error",
            f"seqgrade could not finish this check ({type(exc).__name__}: {exc}); please tell course staff",
            kind="check_error",
        )
    finally:
        _NAMED_CALLS.reset(token)
    figure = outcome.figure if isinstance(outcome, Passed) else None
    return result("passed", "", figure)


def _reproduces(got, want, rtol: float, atol: float) -> bool:
    """``got`` equals ``want`` within the tolerances; tuples and lists part by part."""
    if isinstance(want, (tuple, list)):
        return (
            isinstance(got, (tuple, list))
            and len(got) == len(want)
            and all(_reproduces(g, w, rtol, atol) for g, w in zip(got, want))
        )
    return compare_arrays(got, want, rtol=rtol, atol=atol, check_dtype=False) is None


def diagnose(got, variants, *, rtol: float = RTOL, atol: float = ATOL) -> str | None:
    """The hint of the first known mistake whose result ``got`` reproduces: ``variants`` is a sequence
    of ``(compute, hint)`` where ``compute()`` returns what that mistake would have returned (a tuple is
    compared part by part)."""
    for compute, hint in variants:
        try:
            want = compute()
        except Exception:  # a mistake that cannot even run on this input is not the one made
            continue
        if _reproduces(got, want, rtol, atol):
            return hint
    return None
