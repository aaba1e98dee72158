"""Properties written once and parametrized by the exercise, as scikit-learn's estimator checks are: a check of
an exercise is a template below with that exercise's parameters, under the check's own name and docstring
(:func:`check`), so names, points and sentences stay the exercise's while the property and its charging policy
live here:

- :func:`values`: the function's result equals the reference's on drawn cases (its form checked first, then each
  part compared within a tolerance, with a hint when the difference is a known mistake). A case whose values differ
  at the inputs' precision but agree at float32's is not failed on its own: when every case passes that way, the
  check fails once with kind "precision" (grader.checking.mechanical.Slips), and the judge has every later check
  judge at float32's precision;
- :func:`gradients`: autograd's gradients agree with finite differences of the student's own function
  (grader.checking.properties), at the precision the answer was computed in;
- :func:`single_example`: one example alone gives its row of the batched result;
- :func:`form`: the result has the type, shape and dtype asked for (the :class:`Values` spec's ``form``, alone);
- :func:`count`: a whole number equals the count it should (:class:`Count`).

The position properties are templates of the same kind in grader.checking.positions: :func:`causality` (built
from one influence-matrix helper, along any axis) and :func:`permutation_equivariance` (any arguments reordered
along any axis, the output reordered the same way or left as it was); the class properties are in
grader.checking.modules.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Sequence

from .answers import whole_number
from .base import CheckFailed, Lazy, call, diagnose, fail_if, for_all, format_call
from .compare import ATOL, RTOL, compare_arrays
from .mechanical import Slips, target_dtype
from .properties import assert_gradients_match_own_function, assert_one_example_matches_batch


def check(template: Callable, name: str, doc: str, **params) -> Callable:
    """The check ``name`` of an exercise: ``template`` given the exercise's ``params``, with ``doc`` as its
    docstring (first line: the property students read; then when it cannot be judged)."""
    func = functools.partial(template, key=name, **params)
    func.__name__ = func.__qualname__ = name
    func.__doc__ = doc
    return func


def _whole(value, args, context):
    return value


@dataclass(frozen=True)
class Values:
    """What "the values equal the reference's" needs to know about one exercise.

    ``inputs(case)`` gives the call's arguments for a drawn case; ``form(value, args, context)`` returns the
    answer in the form compared (raising CheckFailed of kind type, shape or dtype when it has another);
    ``parts`` names the parts of a tuple answer compared in order ((name, index) pairs; empty: the whole answer,
    called ``name``); each part is compared as a ``kind`` (default: the reference's), its dtype too unless
    ``check_dtype`` is False, within ``rtol``/``atol``; ``compare(got, want, args, context, part)`` replaces that
    comparison (FlashAttention's error rule, say); ``mistakes(*args)`` gives (compute, hint) pairs of known
    mistakes for the hint, matched at the same tolerances; ``show(args)`` renders the call in messages (default
    ``name(arg names)``), after ``lead`` ("for " unless a message reads better without it)."""

    function: str
    cases: Callable[[], object]
    inputs: Callable[[object], list]
    reference: Callable[..., object]
    max_examples: int = 12
    examples: tuple = ()
    form: Callable = _whole
    parts: tuple[tuple[str, int], ...] = ()
    name: str = "the result"
    rtol: float = RTOL
    atol: float = ATOL
    compare: Callable | None = None
    mistakes: Callable | None = None
    show: Callable | None = None
    lead: str = "for "
    kind: str | None = None
    check_dtype: bool = True

    def context(self, args) -> Lazy:
        return Lazy(lambda: f"{self.lead}{self.show(args) if self.show else format_call(self.function, args)}")

    def close(self, got, want, args, context, name: str) -> None:
        """``got`` equals ``want`` within the tolerances (or by ``compare``), with a hint for a known mistake."""
        if self.compare is not None:
            return self.compare(got, want, args, context, name)
        mismatch = compare_arrays(
            got, want, name=name, rtol=self.rtol, atol=self.atol, kind=self.kind, check_dtype=self.check_dtype
        )
        if mismatch is not None:
            hint = diagnose(got, self.mistakes(*args), rtol=self.rtol, atol=self.atol) if self.mistakes else None
            fail_if(mismatch, context, hint=hint)


def values(student, *, spec: Values, key: str) -> None:
    """The template of "the values equal the reference's" (see :class:`Values`), precision charged once."""
    slips = Slips()

    def prop(case):
        args = spec.inputs(case)
        context = spec.context(args)
        got = spec.form(call(student, spec.function, *args).value, args, context)
        want = spec.reference(*args)
        for name, index in spec.parts or ((spec.name, None),):
            g, w = (got, want) if index is None else (got[index], want[index])
            slips.judge(lambda: spec.close(g, w, args, context, name), target_dtype(args))

    for_all(spec.cases(), prop, max_examples=spec.max_examples, examples=spec.examples, key=key)
    slips.charge()


def form(student, *, spec: Values, key: str, max_examples: int = 4, examples: tuple | None = None) -> None:
    """The template of "the result has the type, shape and dtype asked for": ``spec.form`` alone, on
    ``max_examples`` drawn cases and ``examples`` (default the spec's own). A format check that asks more of the
    form than the values check does (a dtype, say) is given ``dataclasses.replace(spec, form=...)``."""

    def prop(case):
        args = spec.inputs(case)
        spec.form(call(student, spec.function, *args).value, args, spec.context(args))

    for_all(
        spec.cases(), prop, max_examples=max_examples, examples=spec.examples if examples is None else examples, key=key
    )


@dataclass(frozen=True)
class Gradients:
    """What "autograd's gradients agree with the function's own output" needs: the arguments differentiated
    (``wrt``, named ``names``), the result's shape for the arguments (``out_shape(args)``) and the case's seed."""

    function: str
    cases: Callable[[], object]
    inputs: Callable[[object], list]
    wrt: tuple[int, ...]
    names: tuple[str, ...]
    out_shape: Callable[[list], tuple]
    seed: Callable[[object], int]
    max_examples: int = 3
    examples: tuple = ()


def gradients(student, *, spec: Gradients, key: str) -> None:
    """The template of "gradients agree with finite differences of the student's own function"."""

    def prop(case):
        args = spec.inputs(case)
        assert_gradients_match_own_function(
            student, spec.function, args, spec.wrt, spec.names, spec.out_shape(args), spec.seed(case)
        )

    for_all(spec.cases(), prop, max_examples=spec.max_examples, examples=spec.examples, key=key)


def single_example(
    student,
    *,
    function: str,
    cases: Callable[[], object],
    inputs: Callable[[object], list],
    single: Callable[[list, int], list],
    rows: Callable[[object], Sequence[int]],
    key: str,
    max_examples: int = 6,
    examples: tuple = (),
) -> None:
    """The template of "one example alone gives its row of the batched result": ``single(args, i)`` gives the
    arguments of example i alone, ``rows(case)`` the examples compared."""

    def prop(case):
        args = inputs(case)
        assert_one_example_matches_batch(student, function, args, lambda i: single(args, i), rows=rows(case))

    for_all(cases(), prop, max_examples=max_examples, examples=examples, key=key)


@dataclass(frozen=True)
class Count:
    """What "the function returns the right whole number" needs to know about one exercise.

    ``inputs(case)`` gives the call's arguments for a drawn case and ``want(case)`` the number; a wrong one fails
    with "<call> returned <got>; <says(case, want)>" and the hint ``hint(case, got, want)`` (a text, or a function
    giving a known mistake's hint or None); ``show(args)`` renders the call (default ``name(arg names)``)."""

    function: str
    cases: Callable[[], object]
    inputs: Callable[[object], list]
    want: Callable[[object], int]
    says: Callable[[object, int], str]
    max_examples: int = 12
    examples: tuple = ()
    hint: str | Callable[[object, int, int], str | None] | None = None
    show: Callable[[list], str] | None = None


def count(student, *, spec: Count, key: str) -> None:
    """The template of "the function returns the right whole number" (see :class:`Count`); an integral float
    counts as that int, anything else fails with kind type."""

    def prop(case):
        args = spec.inputs(case)
        context = Lazy(lambda: spec.show(args) if spec.show else format_call(spec.function, args))
        got = whole_number(call(student, spec.function, *args).value, context)
        want = spec.want(case)
        if got != want:
            hint = spec.hint(case, got, want) if callable(spec.hint) else spec.hint
            raise CheckFailed(f"{context} returned {got}; {spec.says(case, want)}", hint=hint)

    for_all(spec.cases(), prop, max_examples=spec.max_examples, examples=spec.examples, key=key)
