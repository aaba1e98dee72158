"""The shared properties of the lm_modules class checks (grader.assignments.lm_modules.recurrent_modules): what each class
is (its sizes, parameter layout, inputs and reference), and one property function per kind of check that
builds the class by handle (grader.checking.modules) and judges it."""
from __future__ import annotations

import numpy as np
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
from grader.checking.strategies import gaussian, st
from reference import lm_modules as ref

from .stand_ins import RECURRENT_CELL, RNN_LAYER

CELL_SMALL = {"B": 2, "D": 3, "H": 4, "seed": 0}
LAYER_SMALL = {"B": 2, "T": 4, "D": 3, "H": 4, "seed": 0}
LM_SMALL = {"B": 2, "T": 4, "V": 5, "E": 3, "H": 4, "L": 2, "seed": 0}


def cell_dims():
    return st.fixed_dictionaries({"B": st.integers(1, 3), "D": st.integers(1, 4), "H": st.integers(1, 4),
                                  "seed": st.integers(0, 2**16)})


def layer_dims():
    return st.fixed_dictionaries({"B": st.integers(1, 3), "T": st.integers(1, 5), "D": st.integers(1, 4),
                                  "H": st.integers(1, 4), "seed": st.integers(0, 2**16)})


def lm_dims():
    return st.fixed_dictionaries({"B": st.integers(1, 3), "T": st.integers(1, 5), "V": st.integers(2, 6),
                                  "E": st.integers(1, 4), "H": st.integers(1, 4), "L": st.integers(1, 3),
                                  "seed": st.integers(0, 2**16)})


def _cell_shapes(D, H):
    return {"input_to_hidden.weight": (H, D), "input_to_hidden.bias": (H,),
            "hidden_to_hidden.weight": (H, H), "hidden_to_hidden.bias": (H,)}


def _tokens(seed, B, T, V):
    return torch.from_numpy(np.random.default_rng(seed).integers(0, V, size=(B, T)))  # (B, T) int64


# --- what each class is, for the shared properties below ------------------------------------------------------

class Cell:
    name, classes, hint = "RecurrentCell", None, ("Keep two nn.Linear layers named input_to_hidden and hidden_to_hidden "
                                                  "(with bias); one Linear over the concatenation [x; h] is another layout.")

    @staticmethod
    def sizes(d):
        return (d["D"], d["H"])

    @staticmethod
    def shapes(d):
        return _cell_shapes(d["D"], d["H"])

    @staticmethod
    def inputs(d, dtype=torch.float64):
        return [gaussian(d["seed"] + 1, d["B"], d["D"]).to(dtype), gaussian(d["seed"] + 2, d["B"], d["H"]).to(dtype)]

    @staticmethod
    def out_shape(d):
        return (d["B"], d["H"])

    @staticmethod
    def expected(w, x, h):
        return ref.recurrent_cell_step(x, h, w["input_to_hidden.weight"], w["input_to_hidden.bias"],
                                       w["hidden_to_hidden.weight"], w["hidden_to_hidden.bias"])


class Layer(Cell):
    name, classes = "RNNLayer", {"RecurrentCell": RECURRENT_CELL}
    hint = "Build the cell as self.cell = RecurrentCell(input_dim, hidden_dim); keep no other parameters."

    @staticmethod
    def shapes(d):
        return {f"cell.{k}": v for k, v in _cell_shapes(d["D"], d["H"]).items()}

    @staticmethod
    def inputs(d, dtype=torch.float64):
        return [gaussian(d["seed"] + 1, d["B"], d["T"], d["D"]).to(dtype), gaussian(d["seed"] + 2, d["B"], d["H"]).to(dtype)]

    @staticmethod
    def out_shape(d):
        return (d["B"], d["T"], d["H"])

    @staticmethod
    def expected(w, x_seq, h):
        return ref.rnn_layer_states(x_seq, h, w["cell.input_to_hidden.weight"], w["cell.input_to_hidden.bias"],
                                    w["cell.hidden_to_hidden.weight"], w["cell.hidden_to_hidden.bias"])


class Model:
    name, classes = "RNNLanguageModel", {"RNNLayer": RNN_LAYER}
    hint = ("Name the parts embedding (nn.Embedding), layers (nn.ModuleList of RNNLayer: embed_dim -> hidden_dim "
            "first, then hidden_dim -> hidden_dim) and classification_head (nn.Linear(hidden_dim, vocab_size)).")

    @staticmethod
    def sizes(d):
        return (d["V"], d["E"], d["H"], d["L"])

    @staticmethod
    def shapes(d):
        return ref.parameter_shapes(d["V"], d["E"], d["H"], d["L"])

    @staticmethod
    def inputs(d, dtype=None):
        return [_tokens(d["seed"] + 1, d["B"], d["T"], d["V"])]

    @staticmethod
    def out_shape(d):
        return (d["B"], d["T"], d["V"])

    @staticmethod
    def expected(w, tokens, L=None):
        return ref.language_model_logits(tokens, w, L)


def probe(student, kind, small) -> str | None:
    """Why the class does no real work (None when it does): its result must depend on each of its inputs and
    be none of them, for the student's own parameters."""
    try:
        built = Built.make(student, kind.name, kind.sizes(small), classes=kind.classes, seed=small["seed"])
        args = kind.inputs(small)
        base = built(*args).value
        if not isinstance(base, torch.Tensor) or not base.is_floating_point() or base.numel() == 0:
            return f"{built.text} returns {type(base).__name__}, not a tensor of numbers"
        if any(a.shape == base.shape and torch.equal(a, base) for a in args if isinstance(a, torch.Tensor)):
            return f"{built.text} returns one of its inputs unchanged"
        for i, a in enumerate(args):
            other = list(args)
            other[i] = change_token(args, 0, small)[0] if not a.is_floating_point() else a + 1.5
            moved = built(*other).value
            if isinstance(moved, torch.Tensor) and moved.shape == base.shape and not differs(moved, base):
                return f"{built.text}'s result does not change when its input {i + 1} changes"
    except StudentErrorAt as exc:
        return f"it raised on a valid input: {exc.message}"
    return None


def probe_recurrent_cell(student):
    """RecurrentCell does some work: its result depends on x and on h_prev and is neither of them."""
    return probe(student, Cell, {**CELL_SMALL, "seed": 7})


def probe_rnn_layer(student):
    """RNNLayer does some work: its states depend on x_seq and on h."""
    return probe(student, Layer, {**LAYER_SMALL, "seed": 7})


def probe_language_model(student):
    """RNNLanguageModel does some work: its logits depend on the tokens."""
    return probe(student, Model, {**LM_SMALL, "seed": 7})


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


def parameters(student, kind, dims, small):
    def prop(d):
        built = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, seed=d["seed"])
        check_parameters(built, kind.shapes(d), kind.hint, kind.inputs(d))

    for_all(dims, prop, max_examples=1, examples=(small,), key=kind.name)


def values(student, kind, dims, small, hint, extra=()):
    def prop(d):
        built = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, seed=d["seed"])
        weights = built.load_course_weights(kind.shapes(d), d["seed"] + 10)
        args = kind.inputs(d)
        context = f"for {built.text} with the grader's weights applied to inputs of shape {[tuple(a.shape) for a in args]}"
        reply = built(*args)
        got = output(reply.value, kind.out_shape(d), built.dtype, context, built)
        want = kind.expected(weights, *args, *[d[k] for k in extra])
        assert_close(got, want, context, hint=hint, precision=built.precision)

    for_all(dims, _judged(prop, student, kind), max_examples=3, examples=(small,), key=kind.name)


def gradients(student, kind, dims, small, wrt):
    def prop(d):
        built = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, seed=d["seed"])
        args = kind.inputs(d)
        context = f"for {built.text} (its own parameters) applied to inputs of shape {[tuple(a.shape) for a in args]}"
        assert_module_gradients(built, args, wrt, kind.out_shape(d), d["seed"], context)

    for_all(dims, _judged(prop, student, kind), max_examples=1, examples=(small,), key=kind.name)


def stateless(student, kind, dims, small):
    def prop(d):
        built = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, seed=d["seed"])
        first, other = kind.inputs(d), kind.inputs({**d, "seed": d["seed"] + 50})
        context = f"for {built.text}"
        before = output(built(*first).value, kind.out_shape(d), built.dtype, context, built)
        built(*other)
        again = output(built(*first).value, kind.out_shape(d), built.dtype, context, built)
        if differs(before, again):
            raise CheckFailed(f"{context}: calling it on the same inputs twice, with another call in between, gave "
                              f"different results: the module keeps state from one call to the next", kind="values")
        built.method("eval")
        evaluated = output(built(*first).value, kind.out_shape(d), built.dtype, context + " in eval() mode", built)
        built.method("train")
        if differs(before, evaluated):
            raise CheckFailed(f"{context}: eval() changed the result; these modules have no dropout or batch norm, so "
                              f"train() and eval() must agree", kind="values")

    for_all(dims, prop, max_examples=1, examples=(small,), key=kind.name)


def batch_equivariance(student, kind, dims, small):
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
        assert_close(flipped, got[order], context, name="the result for the reordered batch",
                     hint="Treat every row of the batch the same way; never mix rows.",
                     precision=built.precision or twin.precision)

    for_all(dims, _judged(prop, student, kind), max_examples=1, examples=(small,), key=kind.name)


def dtypes(student, kind, dims, small):
    """Computes in float32 as built and in float64 after .double(): a float32 result, a float64 one holding only
    float32's digits, or a dtype mismatch raised after .double() is a precision charge (kind "precision")."""
    def prop(d):
        single = Built.make(student, kind.name, kind.sizes(d), classes=kind.classes, double=False, seed=d["seed"])
        output(single(*kind.inputs(d, torch.float32)).value, kind.out_shape(d), torch.float32,
               f"for {single.text} as built (float32)")
        double = single.twin()
        double.method("double")
        context = f"for {single.text} after .double()"
        try:
            value = double(*kind.inputs(d, torch.float64), strict=True).value
        except StudentErrorAt as exc:
            if not DTYPE_MISMATCH.search(exc.message):
                raise
            raise CheckFailed(f"{exc.message}: after .double() part of it is still float32 (a tensor made with a fixed "
                              f"dtype meets the float64 parameters)", kind=PRECISION_KIND) from None
        output(value, kind.out_shape(d), torch.float64, context, double)
        if coarser_result(value, torch.float64) is not None:
            what = "is float32" if value.dtype != torch.float64 else "is float64 but holds only float32's digits"
            raise CheckFailed(f"{context}: the result {what}: it computes in float32 (.float() or a tensor of a fixed "
                              f"dtype on the way) and loses the digits float64 keeps", kind=PRECISION_KIND)

    for_all(dims, _judged(prop, student, kind), max_examples=1, examples=(small,), key=kind.name)


def causality(student, kind, dims, small, change):
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
        assert_close(after[:, :j], before[:, :j], context, name=f"the outputs at positions 0..{j - 1}",
                     hint="Position t may use the inputs at positions 0..t only: loop forward in time.",
                     precision=built.precision or twin.precision)
        if not differs(after[:, j:], before[:, j:]):
            raise Skip()  # nothing after j moved (every unit of a small relu layer can be off): says nothing

    for_all(dims, _judged(prop, student, kind), max_examples=2, examples=(small,),
            unjudged="no change of an input moved any later output, so causality could not be observed", key=kind.name)


def change_vector(args, j, d):
    x_seq, h = args
    x_seq = x_seq.clone()
    x_seq[:, j] += 1.5
    return [x_seq, h]


def change_token(args, j, d):
    tokens = args[0].clone()
    tokens[:, j] = (tokens[:, j] + 1) % d["V"]
    return [tokens]
