"""Properties over positions, written once as templates (used through :func:`grader.checking.templates.check`) and
judged on the student's own function:

- :func:`causality` (:class:`Causality`): changing the input at position j changes no output at a position i < j,
  judged from one influence matrix (:func:`influence`) along any axis;
- :func:`permutation_equivariance` (:class:`Permutation`): reordering some arguments along an axis (the positions,
  the queries, the keys, the batch) reorders each part of the result the same way, or leaves it unchanged (the
  keys of attention, say).

Both pay only for a function that really mixes positions: a function that treats every position on its own
(``X @ Wv``) is trivially equivariant and causal, so a causality check where no output ever depended on an earlier
input is not judged, and a permutation check may have a :class:`Gate` that skips an example whose result does not
respond to its input (a check whose every example was skipped is not judged).

What differs between exercises (the messages students read, the perturbation, the tolerance, the permutation drawn)
is the spec's; the recorded results depend on each exactly, so the variants are kept rather than unified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from .base import CheckFailed, Lazy, NotJudged, Passed, Skip, call, fail_if, for_all, format_call
from .compare import ATOL, RTOL, compare_arrays, describe, kind_of
from .strategies import gaussian

MOVED = 1e-12  # an output moved when it changed by more than this (times 1 + its largest magnitude, when relative)


def expect_tensor(value, shape, context, name: str = "the result") -> torch.Tensor:
    """``value`` as a detached tensor of ``shape``; anything else is left to the values check (not judged here)."""
    if kind_of(value) != "tensor" or tuple(value.shape) != tuple(shape):
        raise NotJudged(
            f"{context}: {name} is {describe(value)}, not a tensor of shape {tuple(shape)} (see the values check)",
            kind="not_judged",
        )
    return value.detach()


def like_input(value, args, context) -> torch.Tensor:
    """The default form: a tensor shaped like the first argument (else not judged)."""
    return expect_tensor(value, tuple(args[0].shape), context)


def with_arg(args: list, index: int, value) -> list:
    out = list(args)
    out[index] = value
    return out


def along(axis: int, index) -> tuple:
    """The subscript that takes ``index`` along ``axis``: ``x[along(-2, p)]`` is ``x[..., p, :]``, ``x[along(0, p)]``
    is ``x[p]``."""
    if axis < 0:
        return (Ellipsis, index) + (slice(None),) * (-axis - 1)
    return (slice(None),) * axis + (index,)


# --- permutations (each check keeps the draw its recorded results were made with) ----------------------------


def random_permutation(seed: int, n: int) -> torch.Tensor:
    """A permutation of ``range(n)`` that moves something whenever ``n > 1`` (numpy's draw, rolled if the identity)."""
    perm = np.random.default_rng(seed).permutation(n)
    if n > 1 and np.all(perm == np.arange(n)):
        perm = np.roll(perm, 1)
    return torch.from_numpy(perm)


def any_permutation(seed: int, n: int) -> torch.Tensor:
    """numpy's permutation of ``range(n)`` for ``seed``, the identity included."""
    return torch.from_numpy(np.random.default_rng(seed).permutation(n))


def reversed_if_identity(seed: int, n: int) -> torch.Tensor:
    """numpy's permutation of ``range(n)`` for ``seed``, reversed when it is the identity."""
    perm = any_permutation(seed, n)
    return perm.flip(0) if torch.equal(perm, torch.arange(n)) else perm


def torch_permutation(seed: int, n: int) -> torch.Tensor:
    """``torch.randperm(n)`` from a generator seeded with ``seed``, the identity included."""
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed))


# --- the influence matrix --------------------------------------------------------------------------------------


def changed_positions(
    out: torch.Tensor,
    base: torch.Tensor,
    *,
    axis: int = -2,
    relative: bool = True,
    nan_moves: bool = False,
    floor: float = MOVED,
) -> torch.Tensor:
    """Which positions along ``axis`` of ``out`` differ from ``base`` by more than ``floor`` (times 1 + the largest
    magnitude of ``base`` when ``relative``). With ``nan_moves`` a NaN appearing or going counts as a change and the
    magnitude is the largest finite one; without, NaN never counts."""
    if nan_moves:
        finite = torch.isfinite(base)
        scale = float(base[finite].abs().max()) if finite.any() else 0.0
        change = torch.nan_to_num((out - base).abs(), nan=0.0) + (torch.isnan(out) != torch.isnan(base))
    else:
        scale = base.abs().max()
        change = (out - base).abs()
    if change.ndim > 1:
        change = change.movedim(axis, 0).flatten(1).amax(1)  # (n,): the largest change at each position
    return change > (floor * (1 + scale) if relative else floor)


def influence(outputs: Callable[[int], torch.Tensor], base: torch.Tensor, n: int, **moved) -> np.ndarray:
    """``M[i, j] = 1`` when the output at position i changed as the input at position j changed: ``outputs(j)`` is
    the output for the inputs changed at position j, and ``moved`` says along which axis and how a change is
    measured (:func:`changed_positions`)."""
    M = np.zeros((n, n), dtype=int)
    for j in range(n):
        M[:, j] = changed_positions(outputs(j), base, **moved).numpy()
    return M


NO_MIXING = (
    "no output ever changed when the input at another position changed, so {name} does not mix positions "
    "(X @ Wv, for one, mixes none); this property pays only for attention that mixes positions"
)


def no_mixing_reason(name: str) -> str:
    """Why a position property is not judged when ``name`` never mixes positions (``for_all``'s ``unjudged``)."""
    return NO_MIXING.format(name=name)


# --- what every property over positions needs ------------------------------------------------------------------


@dataclass(frozen=True)
class Positions:
    """What every property over positions needs: ``function`` called on ``inputs(case)`` for the cases ``cases()``
    draws (``max_examples`` of them, after ``examples``), with the seed ``seed(case)``; the positions of the
    arguments in ``arguments`` lie along ``axis``. ``form(value, args, context)`` returns the result judged (raising
    NotJudged, or CheckFailed, for another form), ``moved_form`` that of the calls on changed inputs (default
    ``form``); ``show(args)`` renders the call in messages (default ``function(arg names)``)."""

    function: str
    cases: Callable[[], object]
    inputs: Callable[[object], list]
    seed: Callable[[object], int]
    max_examples: int = 3
    examples: tuple = ()
    arguments: tuple[int, ...] = (0,)
    axis: int = -2
    form: Callable = like_input
    moved_form: Callable | None = None
    show: Callable | None = None

    def count(self, args: list) -> int:
        """How many positions the arguments have."""
        return args[self.arguments[0]].shape[self.axis]

    def lazy(self, args: list, text: str = "for {call}", **fields) -> Lazy:
        """``text`` with the call (field call) and ``fields``, made only if shown."""
        return Lazy(
            lambda: text.format(call=self.show(args) if self.show else format_call(self.function, args), **fields)
        )

    def result(self, student, args: list, context, *, changed: list | None = None):
        """The result of ``function`` on ``args``, or on ``changed`` (their moved or reordered version, whose
        result has ``moved_form``), in the form judged for ``args``."""
        if changed is None:
            return self.form(call(student, self.function, *args).value, args, context)
        return (self.moved_form or self.form)(call(student, self.function, *changed).value, args, context)


# --- causality -------------------------------------------------------------------------------------------------

LEAK = (
    "{context}: changing the input at position {j} changed the output at earlier position {i}; {count} such "
    "(query, later key) pairs leak"
)


def noise(arguments: tuple[int, ...], axis: int, offsets: tuple[int, ...]) -> Callable[[list, int, int], list]:
    """The default change at position j: gaussian noise of seed ``seed + offset + j`` added at position j (along
    ``axis``) of each argument in ``arguments``, one offset each."""

    def perturb(args: list, j: int, seed: int) -> list:
        out = list(args)
        for index, offset in zip(arguments, offsets):
            moved = args[index].clone()
            moved[along(axis, j)] += gaussian(seed + offset + j, *moved[along(axis, j)].shape)
            out[index] = moved
        return out

    return perturb


@dataclass(frozen=True)
class Causality(Positions):
    """What "no output at position i depends on an input at a later position j > i" needs to know about one exercise
    (besides :class:`Positions`).

    Position j of the arguments is changed by ``perturb(args, j, seed)`` (default: :func:`noise` with ``offsets``).
    The output's positions lie along ``out_axis``, and a change is measured as :func:`changed_positions` does with
    ``relative`` and ``nan_moves``. The first leaking (earlier
    output i, later input j) pair fails with ``leak`` (fields context, i, j, count) and ``hint``; ``figure`` says
    when the influence matrix is shown: "always", on "failure" only, or "never". ``unjudged`` says why the check
    is not judged when no output ever depended on an earlier input (default: :func:`no_mixing_reason`)."""

    offsets: tuple[int, ...] = (100,)
    perturb: Callable[[list, int, int], list] | None = None
    out_axis: int = -2
    relative: bool = True
    nan_moves: bool = False
    leak: str = LEAK
    hint: str | None = None
    figure: str = "always"
    unjudged: str | None = None

    def changed(self, args: list, j: int, seed: int) -> list:
        return (self.perturb or noise(self.arguments, self.axis, self.offsets))(args, j, seed)


def causality(student, *, spec: Causality, key: str):
    """The template of causality (see :class:`Causality`): pays only when some output depends on an earlier input."""
    figure: dict = {}
    mixes: list[bool] = []

    def prop(case):
        args, seed = spec.inputs(case), spec.seed(case)
        context = spec.lazy(args)
        base = spec.result(student, args, context)

        def outputs(j):
            return spec.result(student, args, context, changed=spec.changed(args, j, seed))

        M = influence(
            outputs, base, spec.count(args), axis=spec.out_axis, relative=spec.relative, nan_moves=spec.nan_moves
        )
        N = M.shape[0]
        shown = {"kind": "influence", "T": N, "matrix": M.tolist()}
        if spec.figure == "always":
            figure.update(shown)
        leaks = [(i, j) for i in range(N) for j in range(i + 1, N) if M[i, j]]
        if leaks:
            i, j = leaks[0]
            raise CheckFailed(
                spec.leak.format(context=context, i=i, j=j, count=len(leaks)),
                hint=spec.hint,
                figure={"always": dict(figure), "failure": shown}.get(spec.figure),
            )
        if N > 1:
            mixes.append(any(M[i, j] for i in range(N) for j in range(i)))

    for_all(spec.cases(), prop, max_examples=spec.max_examples, examples=spec.examples, key=key)
    if not any(mixes):
        raise NotJudged(spec.unjudged or no_mixing_reason(spec.function))
    return Passed(figure=dict(figure) if spec.figure == "always" else None)


# --- permutation equivariance and invariance -------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One part of the result judged: ``index`` in a tuple result (None: the whole result), the ``axis`` it is
    reordered along (None: it must stay the same, invariance), and ``expected``, the words after the context in a
    failure (fields perm and part)."""

    name: str = "the result"
    index: int | None = None
    axis: int | None = -2
    expected: str = ""


@dataclass(frozen=True)
class Gate:
    """An example is skipped unless the result responds to its input: ``perturb(args, seed)`` changes the inputs
    (None: it cannot) and ``watch(result)`` picks what must then change."""

    perturb: Callable[[list, int], list | None]
    watch: Callable[[object], object]


def last_position_moves(index: int = 0, offset: int = 5) -> Gate:
    """Attention's gate: noise at the last position (axis -2) of argument ``index`` moves some other output."""

    def perturb(args: list, seed: int) -> list | None:
        X = args[index]
        if X.shape[-2] < 2:
            return None
        moved = X.clone()
        moved[..., -1, :] += gaussian(seed + offset, *moved[..., -1, :].shape)
        return with_arg(args, index, moved)

    return Gate(perturb, lambda result: result[..., :-1, :])


def over_positions(function: str, what: str) -> dict:
    """The :class:`Permutation` settings attention's checks share: the positions (axis -2) of ``what`` reordered,
    the whole result reordered the same way, :func:`last_position_moves` as the gate, and their words."""
    return {
        "gate": last_position_moves(),
        "unjudged": no_mixing_reason(function),
        "label": f"{{part}} for the reordered {what}",
        "parts": (
            Part(
                expected=f" and its positions reordered as {{perm}} (result = {function} of the reordered "
                f"{what}, expected = the original result reordered the same way)"
            ),
        ),
    }


@dataclass(frozen=True)
class Permutation(Positions):
    """What "reordering some arguments reorders the result the same way (or leaves it unchanged)" needs (besides
    :class:`Positions`).

    The arguments are reordered together along their positions by ``permutation(seed, n)``. The result of
    ``form`` is a tensor, or a tuple whose ``parts`` are judged; each :class:`Part` is compared within
    ``rtol``/``atol`` (its dtype too when ``check_dtype``). A difference fails with ``context`` (fields call and
    perm), then the part's ``expected`` words and where it differs (the part named by ``label``, field part); or,
    when ``failure`` is set, with those words (fields perm and part) and ``hint``. A ``gate`` skips an example whose
    result does not respond; ``unjudged`` says why when every example was skipped."""

    permutation: Callable[[int, int], torch.Tensor] = random_permutation
    parts: tuple[Part, ...] = (Part(),)
    gate: Gate | None = None
    unjudged: str = ""
    context: str = "for {call}"
    label: str = "{part} for the reordered input"
    failure: str | None = None
    hint: str | None = None
    rtol: float = RTOL
    atol: float = ATOL
    check_dtype: bool = True


def responds(student, function: str, gate: Gate, args: list, seed: int, base, form, context) -> None:
    """Raise Skip unless the result of ``function`` responds to the change ``gate`` makes to ``args``."""
    changed = gate.perturb(args, seed)
    moved = None if changed is None else form(call(student, function, *changed).value, args, context)
    if moved is None or compare_arrays(gate.watch(moved), gate.watch(base), rtol=RTOL, atol=ATOL) is None:
        raise Skip()  # the result does not respond to its input: nothing to reorder


def permutation_equivariance(student, *, spec: Permutation, key: str) -> None:
    """The template of permutation equivariance and invariance (see :class:`Permutation`)."""

    def prop(case):
        args, seed = spec.inputs(case), spec.seed(case)
        perm = spec.permutation(seed, spec.count(args))
        context = spec.lazy(args, spec.context, perm=perm.tolist())
        base = spec.result(student, args, context)
        if spec.gate is not None:
            responds(student, spec.function, spec.gate, args, seed, base, spec.form, context)
        moved = list(args)
        for index in spec.arguments:
            moved[index] = args[index][along(spec.axis, perm)]
        got = spec.result(student, args, context, changed=moved)
        for part in spec.parts:
            g, b = (got, base) if part.index is None else (got[part.index], base[part.index])
            want = b if part.axis is None else b[along(part.axis, perm)]
            mismatch = compare_arrays(
                g,
                want,
                name=spec.label.format(part=part.name),
                rtol=spec.rtol,
                atol=spec.atol,
                check_dtype=spec.check_dtype,
            )
            words = {"perm": perm.tolist(), "part": part.name}
            if mismatch is not None and spec.failure is not None:
                raise CheckFailed(f"{context}: {spec.failure.format(**words)}", hint=spec.hint)
            fail_if(mismatch, context + part.expected.format(**words), hint=spec.hint)

    for_all(spec.cases(), prop, max_examples=spec.max_examples, examples=spec.examples, unjudged=spec.unjudged, key=key)
