"""The shared properties of the lm_modules class checks (grader.assignments.lm_modules.recurrent_modules): one
property function per kind of check that builds the class by handle (grader.checking.modules) and judges it, for
what each class is (grader.assignments.lm_modules.module_kinds)."""

from __future__ import annotations

import torch

from grader.checking.base import CheckFailed, NotJudged, Skip, StudentErrorAt, for_all
from grader.checking.mechanical import PRECISION_KIND, coarser_result
from grader.checking.modules import (
    DTYPE_MISMATCH,
    Built,
    assert_close,
    assert_module_gradients,
    check_parameters,
    differs,
    not_reached,
    output,
)

# --- shared properties -------------------------------------------------------------------------------------
#
# Each property builds the class by handle and judges it at the precision its results show (a module computing in
# float32 is charged by the dtypes check alone); a failure of a module the grader's numbers do not reach is not
# judged (grader.checking.modules.not_reached: the parameters check charges it).


def _judged(prop, student, kind):
    """``prop(d)``, with a failure of a module that computes with tensors its state_dict() does not hold left
    to the parameters check."""

    def judged(d):
        try:
            prop(d)
        except NotJudged:
            raise
        except (CheckFailed, StudentErrorAt):
            built = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, seed=d["seed"])
            not_reached(built, kind.inputs(d))
            raise

    return judged


def parameters(student, *, kind, dims, small, key: str):
    def prop(d):
        built = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, seed=d["seed"])
        check_parameters(built, kind.shapes(d), kind.hint, kind.inputs(d))

    for_all(dims, prop, max_examples=1, examples=(small,), key=key)


def values(student, *, kind, dims, small, hint, extra=(), key: str):
    def prop(d):
        built = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, seed=d["seed"])
        weights = built.load_course_weights(kind.shapes(d), d["seed"] + 10)
        args = kind.inputs(d)
        context = (
            f"for {built.text} with the grader's weights applied to inputs of shape {[tuple(a.shape) for a in args]}"
        )
        reply = built(*args)
        got = output(reply.value, kind.out_shape(d), built.dtype, context, built)
        want = kind.expected(weights, *args, *[d[k] for k in extra])
        assert_close(got, want, context, hint=hint, precision=built.precision)

    for_all(dims, _judged(prop, student, kind), max_examples=3, examples=(small,), key=key)


def gradients(student, *, kind, dims, small, wrt, key: str):
    def prop(d):
        built = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, seed=d["seed"])
        args = kind.inputs(d)
        context = f"for {built.text} (its own parameters) applied to inputs of shape {[tuple(a.shape) for a in args]}"
        assert_module_gradients(built, args, wrt, kind.out_shape(d), d["seed"], context)

    for_all(dims, _judged(prop, student, kind), max_examples=1, examples=(small,), key=key)


def stateless(student, *, kind, dims, small, key: str):
    def prop(d):
        built = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, seed=d["seed"])
        first, other = kind.inputs(d), kind.inputs({**d, "seed": d["seed"] + 50})
        context = f"for {built.text}"
        before = output(built(*first).value, kind.out_shape(d), built.dtype, context, built)
        built(*other)
        again = output(built(*first).value, kind.out_shape(d), built.dtype, context, built)
        if differs(before, again):
            raise CheckFailed(
                f"{context}: calling it on the same inputs twice, with another call in between, gave "
                f"different results: the module keeps state from one call to the next",
                kind="values",
            )
        built.method("eval")
        evaluated = output(built(*first).value, kind.out_shape(d), built.dtype, context + " in eval() mode", built)
        built.method("train")
        if differs(before, evaluated):
            raise CheckFailed(
                f"{context}: eval() changed the result; these modules have no dropout or batch norm, so "
                f"train() and eval() must agree",
                kind="values",
            )

    for_all(dims, prop, max_examples=1, examples=(small,), key=key)


def batch_equivariance(student, *, kind, dims, small, key: str):
    def prop(d):
        if d["B"] < 2:
            d = {**d, "B": 3}
        built = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, seed=d["seed"])
        args = kind.inputs(d)
        order = torch.arange(d["B"]).flip(0)
        context = f"for {built.text} on a batch of {d['B']} and the same batch in reverse order"
        got = output(built(*args).value, kind.out_shape(d), built.dtype, context, built)
        twin = built.twin()
        flipped = output(twin(*[a[order] for a in args]).value, kind.out_shape(d), twin.dtype, context, twin)
        assert_close(
            flipped,
            got[order],
            context,
            name="the result for the reordered batch",
            hint="Treat every row of the batch the same way; never mix rows.",
            precision=built.precision or twin.precision,
        )

    for_all(dims, _judged(prop, student, kind), max_examples=1, examples=(small,), key=key)


def dtypes(student, *, kind, dims, small, key: str):
    """Computes in float32 as built and in float64 after .double(): a float32 result, a float64 one holding only
    float32's digits, or a dtype mismatch raised after .double() is a precision charge (kind "precision")."""

    def prop(d):
        single = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, double=False, seed=d["seed"])
        output(
            single(*kind.inputs(d, torch.float32)).value,
            kind.out_shape(d),
            torch.float32,
            f"for {single.text} as built (float32)",
        )
        double = single.twin()
        double.method("double")
        context = f"for {single.text} after .double()"
        try:
            value = double(*kind.inputs(d, torch.float64), strict=True).value
        except StudentErrorAt as exc:
            if not DTYPE_MISMATCH.search(exc.message):
                raise
            raise CheckFailed(
                f"{exc.message}: after .double() part of it is still float32 (a tensor made with a fixed "
                f"dtype meets the float64 parameters)",
                kind=PRECISION_KIND,
            ) from None
        output(value, kind.out_shape(d), torch.float64, context, double)
        if coarser_result(value, torch.float64) is not None:
            what = "is float32" if value.dtype != torch.float64 else "is float64 but holds only float32's digits"
            raise CheckFailed(
                f"{context}: the result {what}: it computes in float32 (.float() or a tensor of a fixed "
                f"dtype on the way) and loses the digits float64 keeps",
                kind=PRECISION_KIND,
            )

    for_all(dims, _judged(prop, student, kind), max_examples=1, examples=(small,), key=key)


def causality(student, *, kind, dims, small, change, key: str):
    """Changing the input at position j changes no output before j, and some output at or after j."""

    def prop(d):
        if d["T"] < 2:
            d = {**d, "T": 3}
        built = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, seed=d["seed"])
        args = kind.inputs(d)
        j = d["T"] // 2
        changed = change(args, j, d)
        context = f"for {built.text} on a sequence of length {d['T']} and the same sequence changed at position {j}"
        before = output(built(*args).value, kind.out_shape(d), built.dtype, context, built)
        twin = built.twin()
        after = output(twin(*changed).value, kind.out_shape(d), twin.dtype, context, twin)
        assert_close(
            after[:, :j],
            before[:, :j],
            context,
            name=f"the outputs at positions 0..{j - 1}",
            hint="Position t may use the inputs at positions 0..t only: loop forward in time.",
            precision=built.precision or twin.precision,
        )
        if not differs(after[:, j:], before[:, j:]):
            raise Skip()  # nothing after j moved (every unit of a small relu layer can be off): says nothing

    for_all(
        dims,
        _judged(prop, student, kind),
        max_examples=2,
        examples=(small,),
        unjudged="no change of an input moved any later output, so causality could not be observed",
        key=key,
    )
