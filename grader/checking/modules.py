"""How a student's ``torch.nn.Module`` class is graded: built in the student's process and addressed by
handle (grader.checking.objectcalls), its parameters read and replaced by the grader's, its outputs compared
outside. The pieces every class check of lm_modules shares; the checks themselves are in
:mod:`grader.assignments.lm_modules.recurrent_modules`.

- ``Built``: an instance constructed with grader-chosen sizes (in float64 unless asked otherwise), its
  parameters as the student's class lays them out, and the calls on it;
- the grader's own weights are loaded only when the layout is the course's (names and shapes are part of
  the contract); otherwise a check that needs them is not judged, since the parameters check already
  charges the layout;
- the parameters are observed, never read from what the object says about itself: the grader's numbers
  must reach what the module computes with (:func:`unreached`), and a module that computes with tensors its
  state_dict() does not hold (layers in a plain Python list) is charged once, by the parameters check;
- gradients are judged against finite differences of the student's own module: one random direction over
  the inputs and every parameter, the module evaluated at the parameters moved along it both ways;
- precision is observed from the results (grader.checking.mechanical): a module that computes in float32 where
  float64 is asked (a float32 result, a float64 one holding float32's digits, a float32 state that raises after
  .double()) is charged by the dtypes check alone, and every other check judges it at float32's precision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import torch

from .base import CheckFailed, NotJudged, StudentErrorAt
from .calls import StudentRaised
from .compare import ATOL, RTOL, compare_arrays, describe, kind_of
from .mechanical import COARSER, coarser_result, judged_at
from .properties import fd_settings
from .strategies import gaussian

DTYPE_MISMATCH = re.compile(r"dtype|scalar type|Double|Float|float64|float32", re.IGNORECASE)


def _single(args) -> list:
    return [a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]


def _call_text(name: str, args) -> str:
    shown = ", ".join(f"tensor of shape {tuple(a.shape)}" if isinstance(a, torch.Tensor) else repr(a) for a in args)
    return f"{name}({shown})"


@dataclass
class Built:
    """One instance of a student class, built by the grader in the student's process."""

    student: object
    name: str
    sizes: tuple
    classes: dict | None = None
    handle: str = ""
    shapes: dict = field(default_factory=dict)
    double: bool = True
    seed: int = 0
    loaded: dict = field(default_factory=dict)  # the parameters last loaded (carried over to a float32 instance)
    observed: torch.dtype | None = None  # a coarser precision its results showed (grader.checking.mechanical)

    @classmethod
    def make(cls, student, name: str, sizes, *, classes=None, double: bool = True, seed: int = 0) -> "Built":
        """Construct ``name(*sizes)`` (in float64 with ``double``) and give every parameter, in the student's own
        layout, numbers drawn from ``seed`` (so a property judged on the student's own module is the same on
        every run): one request (grader.jail.objects.prepared)."""
        built = cls(student, name, tuple(sizes), classes, double=double, seed=seed)
        try:
            built.handle, shapes = student.build(
                name, list(sizes), classes=classes, double=double, fill_seed=seed + 500
            )
        except StudentRaised as exc:
            raise StudentErrorAt(f"building {built.text} raised {exc.type_name}: {exc.message}") from None
        built.shapes = {str(k): tuple(int(d) for d in v) for k, v in shapes.items() if isinstance(v, list)}
        return built

    def twin(self) -> "Built":
        """Another instance built the same way, with the same numbers: a property that compares two calls makes
        them on two instances, so state a module wrongly keeps between calls is charged once (stateless)."""
        return Built.make(self.student, self.name, self.sizes, classes=self.classes, double=self.double, seed=self.seed)

    @property
    def text(self) -> str:
        return f"{self.name}({', '.join(map(repr, self.sizes))})"

    def state(self) -> dict:
        return self.student.state(self.name, self.handle)

    def load(self, tensors: dict) -> None:
        self.loaded = tensors
        try:
            self.student.load(self.name, self.handle, tensors)
        except StudentRaised as exc:
            raise StudentErrorAt(f"loading parameters into {self.text} raised {exc.type_name}: {exc.message}") from None

    def method(self, method: str) -> None:
        try:
            self.student.call_method(self.name, self.handle, [], method=method)
        except StudentRaised as exc:
            raise StudentErrorAt(f"{self.text}.{method}() raised {exc.type_name}: {exc.message}") from None
        if method in ("double", "float"):
            self.double = method == "double"

    @property
    def dtype(self) -> torch.dtype:
        """What the module computes in: float64, or float32 when it fails in float64 only (see __call__)."""
        return torch.float64 if self.double else torch.float32

    @property
    def precision(self) -> torch.dtype | None:
        """The coarser precision its results are judged at: float32 when it computes in float32 only, or when a
        result showed float32 arithmetic (see :func:`output`); None otherwise."""
        return COARSER[torch.float64] if not self.double else self.observed

    def __call__(self, *args, strict: bool = False, **options):
        """The module applied to ``args`` (a Reply); what it raises names the call.

        A module that works as built (float32) but raises a dtype mismatch once ``.double()`` was called
        (a state made with a fixed dtype, say) has one mechanical mistake, which the dtypes check charges:
        every other check then judges it in float32, at float32's precision (not ``strict``: the dtypes check
        itself sees the mismatch)."""
        try:
            return self.student.call_method(
                self.name, self.handle, list(args) if self.double else _single(args), **options
            )
        except StudentRaised as exc:
            if self.double and not strict and DTYPE_MISMATCH.search(exc.message):
                single = Built.make(
                    self.student, self.name, self.sizes, classes=self.classes, double=False, seed=self.seed
                )
                if self.loaded:  # the grader's weights, loaded earlier; else the same seeded numbers as built
                    single.load({k: v.float() if v.is_floating_point() else v for k, v in self.loaded.items()})
                try:
                    reply = single.student.call_method(self.name, single.handle, _single(args), **options)
                except StudentRaised:
                    reply = None
                if reply is not None:
                    self.handle, self.double = single.handle, False
                    return reply
            where = f" ({exc.where})" if exc.where else ""
            raise StudentErrorAt(
                f"{self.text} applied to {_call_text('', args)[1:-1]} raised {exc.type_name}: {exc.message}{where}"
            ) from None

    def load_course_weights(self, expected: dict, seed: int) -> dict:
        """Load weights of the grader's (float64, reproducible from ``seed``) when the class lays out its
        parameters as the course's does; otherwise the check cannot compare values: NotJudged."""
        if self.shapes != expected:
            raise NotJudged(
                f"{self.text} does not lay out its parameters as the exercise asks (see the parameters "
                f"check), so the grader cannot load its own weights to compare values",
                kind="not_judged",
            )
        weights = {
            k: gaussian(seed + i, *shape) / max(shape[-1], 1) ** 0.5
            for i, (k, shape) in enumerate(sorted(expected.items()))
        }
        self.load(weights)
        return weights


def parameter_differences(built: Built, expected: dict) -> str:
    """What differs between the instance's parameters and the course's layout, in words ("" when none)."""
    got = built.shapes
    lines = []
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    wrong = [k for k in expected if k in got and got[k] != expected[k]]
    if missing:
        lines.append("missing: " + ", ".join(f"{k} {expected[k]}" for k in missing))
    if extra:
        lines.append("not in the course's layout: " + ", ".join(f"{k} {got[k]}" for k in extra))
    if wrong:
        lines.append("wrong shape: " + ", ".join(f"{k} is {got[k]}, expected {expected[k]}" for k in wrong))
    return "; ".join(lines)


UNREACHED_HINT = (
    "Register every part that holds parameters: sub-modules as attributes or in an nn.ModuleList (a "
    "plain Python list hides them from state_dict(), .double() and the grader's weights), tensors as "
    "nn.Parameter; and leave state_dict() and load_state_dict() as nn.Module defines them."
)


def unreached(built: Built, args: list) -> str | None:
    """Why the parameters loaded into the module do not decide what it computes (None when they do, or when it
    cannot be told). Three instances, each called once on ``args``: ``a`` and ``b`` built with different numbers,
    ``c`` built as ``b`` and given ``a``'s state_dict(); ``c`` must compute what ``a`` computes, and something
    else than ``b``. Observed from results only: what the object lists about itself decides nothing."""

    def make(k):
        return Built.make(
            built.student,
            built.name,
            built.sizes,
            classes=built.classes,
            double=built.double,
            seed=built.seed + 7001 + k,
        )

    try:
        a, b, c = make(0), make(1), make(1)
        state = a.state()
        want, before = a(*args).value, b(*args).value
        c.load(state)
        after = c(*args).value
    except StudentErrorAt:
        return None
    if not all(
        isinstance(t, torch.Tensor) and t.shape == want.shape and t.is_floating_point() for t in (want, before, after)
    ):
        return None
    want, before, after = (t.detach().double() for t in (want, before, after))

    def differs(x, y):  # by more than float32's rounding (the instances may compute in float32): other numbers
        return not torch.allclose(x, y, rtol=1e-4, atol=1e-5)

    if differs(before, want) and not differs(before, after):
        return (
            f"loading another instance's state_dict() into {built.text} did not change what it computes: its "
            f"load_state_dict() does not reach the tensors it computes with"
        )
    if differs(after, want):
        return (
            f"{built.text} computes with tensors its state_dict() does not hold: an instance given another "
            f"instance's state_dict() still computes something else, so the grader's weights cannot reach them"
        )
    return None


def not_reached(built: Built, args: list) -> None:
    """A failure of a property of the module is not judged when the grader's numbers do not reach it (the
    parameters check charges that): two instances built alike may then compute different things."""
    why = unreached(built, args)
    if why is not None:
        raise NotJudged(f"{why} (see the parameters check)", kind="not_judged")


def check_parameters(built: Built, expected: dict, hint: str, args: list) -> None:
    """The module's state_dict() has the course's layout, and the numbers loaded into it decide what it computes."""
    problems = parameter_differences(built, expected)
    why = unreached(built, args)
    if why is not None:
        raise CheckFailed(why + (f". {problems}." if problems else "."), kind="shape", hint=UNREACHED_HINT)
    if problems:
        count = sum(int(torch.Size(s).numel()) for s in built.shapes.values())
        want = sum(int(torch.Size(s).numel()) for s in expected.values())
        raise CheckFailed(
            f"{built.text}.state_dict() should hold exactly {sorted(expected)} with the shapes of the "
            f"course's layout ({want} numbers); it holds {count} numbers. {problems}.",
            kind="shape",
            hint=hint,
        )


def output(value, shape: tuple, dtype: torch.dtype, context: str, built: Built | None = None) -> torch.Tensor:
    """The module's output as a detached tensor of ``shape`` and ``dtype``, or CheckFailed saying why not. With
    ``built``, a result computed in a coarser precision (float32 for float64) is the dtypes check's charge alone:
    it is recorded on ``built`` (judged at that precision from then on) and returned cast to ``dtype``."""
    if kind_of(value) != "tensor":
        raise CheckFailed(f"{context}: the result should be a torch tensor; got {describe(value)}", kind="type")
    if tuple(value.shape) != tuple(shape):
        raise CheckFailed(
            f"{context}: the result has shape {tuple(value.shape)}; expected {tuple(shape)}", kind="shape"
        )
    coarse = coarser_result(value, dtype) if built is not None else None
    if coarse is not None:
        built.observed = coarse
        return value.detach().to(dtype)
    if value.dtype != dtype:
        raise CheckFailed(
            f"{context}: the result has dtype {value.dtype}; expected {dtype} (the parameters' and inputs' dtype)",
            kind="dtype",
        )
    return value.detach()


def assert_close(
    got, want, context: str, name: str = "the result", hint: str | None = None, precision: torch.dtype | None = None
) -> None:
    """``got`` equals ``want`` within float64's tolerance, or at ``precision`` (float32's, when the module computes
    in float32: a float32 ``got`` is judged so too)."""
    if isinstance(got, torch.Tensor) and got.dtype in COARSER.values():
        got, precision = got.double(), precision or got.dtype
    with judged_at(precision):
        problem = compare_arrays(
            got, want.to(got.dtype) if isinstance(want, torch.Tensor) else want, name=name, rtol=RTOL, atol=ATOL
        )
    if problem is not None:
        raise CheckFailed(f"{context}: {problem}", hint=hint)


def assert_module_gradients(
    built: Built, args: list, wrt: list[int], out_shape: tuple, seed: int, context: str
) -> None:
    """Autograd's gradients (inputs ``wrt`` and every parameter) agree with central finite differences of the
    student's own module along one random direction (float64, step 1e-6; at float32's precision a step of 1e-2
    and a tolerance to match, grader.checking.properties.fd_settings)."""
    cot = gaussian(seed + 101, *out_shape)
    reply = built(*args, grad_wrt=wrt, grad_params=True, cotangent=cot)
    output(reply.value, out_shape, built.dtype, context, built)
    if reply.grads is None or reply.param_grads is None:
        raise CheckFailed(
            f"{context}: the result is not differentiable: autograd found no gradient for it (was "
            f"something detached, or computed outside torch?)",
            kind="not_differentiable",
        )
    theta = built.state()
    directions = {
        k: gaussian(seed + 200 + i, *v.shape) for i, (k, v) in enumerate(sorted(theta.items())) if v.is_floating_point()
    }
    moves = {i: gaussian(seed + 300 + i, *args[i].shape) for i in wrt}
    analytic = sum(float((g * moves[i]).sum()) for i, g in zip(wrt, reply.grads))
    analytic += sum(float((reply.param_grads[k] * d).sum()) for k, d in directions.items() if k in reply.param_grads)
    with judged_at(built.precision):
        eps, rtol = fd_settings(torch.float64)
    sides = []
    for sign in (1, -1):  # each side on an instance of its own, as every module call of these checks
        twin = built.twin()
        twin.load({k: v + sign * eps * directions[k] if k in directions else v for k, v in theta.items()})
        moved = [a + sign * eps * moves[i] if i in moves else a for i, a in enumerate(args)]
        sides.append(float((twin(*moved).value.detach().double() * cot).sum()))
    numeric = (sides[0] - sides[1]) / (2 * eps)
    if abs(analytic - numeric) > rtol * max(1.0, abs(numeric)):
        raise CheckFailed(
            f"{context}: along a random direction of the inputs and parameters, autograd's gradients give "
            f"a slope of {analytic:.6g} while finite differences of your module give {numeric:.6g}",
            kind="values",
        )


def differs(a: torch.Tensor, b: torch.Tensor) -> bool:
    return not torch.allclose(a, b, rtol=1e-9, atol=1e-12)
