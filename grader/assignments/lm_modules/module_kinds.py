"""What each lm_modules class is, for the class checks (grader.assignments.lm_modules.recurrent_modules) and their
shared properties (grader.assignments.lm_modules.module_properties): its sizes, parameter layout, inputs and
reference, the probe that tells whether it does real work, and the changes of an input the causality checks make."""

from __future__ import annotations

import numpy as np
import torch

from grader.checking.base import StudentErrorAt
from grader.checking.modules import Built, differs
from grader.checking.strategies import gaussian, st
from reference import lm_modules as ref

from .stand_ins import RECURRENT_CELL, RNN_LAYER

CELL_SMALL = {"B": 2, "D": 3, "H": 4, "seed": 0}
LAYER_SMALL = {"B": 2, "T": 4, "D": 3, "H": 4, "seed": 0}
LM_SMALL = {"B": 2, "T": 4, "V": 5, "E": 3, "H": 4, "L": 2, "seed": 0}


def cell_dims():
    return st.fixed_dictionaries(
        {"B": st.integers(1, 3), "D": st.integers(1, 4), "H": st.integers(1, 4), "seed": st.integers(0, 2**16)}
    )


def layer_dims():
    return st.fixed_dictionaries(
        {
            "B": st.integers(1, 3),
            "T": st.integers(1, 5),
            "D": st.integers(1, 4),
            "H": st.integers(1, 4),
            "seed": st.integers(0, 2**16),
        }
    )


def lm_dims():
    return st.fixed_dictionaries(
        {
            "B": st.integers(1, 3),
            "T": st.integers(1, 5),
            "V": st.integers(2, 6),
            "E": st.integers(1, 4),
            "H": st.integers(1, 4),
            "L": st.integers(1, 3),
            "seed": st.integers(0, 2**16),
        }
    )


def _cell_shapes(D, H):
    return {
        "input_to_hidden.weight": (H, D),
        "input_to_hidden.bias": (H,),
        "hidden_to_hidden.weight": (H, H),
        "hidden_to_hidden.bias": (H,),
    }


def _tokens(seed, B, T, V):
    return torch.from_numpy(np.random.default_rng(seed).integers(0, V, size=(B, T)))  # (B, T) int64


# --- what each class is, for the shared properties (module_properties) -------------------------------------------


class Cell:
    name, classes, hint = (
        "RecurrentCell",
        None,
        (
            "Keep two nn.Linear layers named input_to_hidden and hidden_to_hidden "
            "(with bias); one Linear over the concatenation [x; h] is another layout."
        ),
    )

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
        return ref.recurrent_cell_step(
            x,
            h,
            w["input_to_hidden.weight"],
            w["input_to_hidden.bias"],
            w["hidden_to_hidden.weight"],
            w["hidden_to_hidden.bias"],
        )


class Layer(Cell):
    name, classes = "RNNLayer", {"RecurrentCell": RECURRENT_CELL}
    hint = "Build the cell as self.cell = RecurrentCell(input_dim, hidden_dim); keep no other parameters."

    @staticmethod
    def shapes(d):
        return {f"cell.{k}": v for k, v in _cell_shapes(d["D"], d["H"]).items()}

    @staticmethod
    def inputs(d, dtype=torch.float64):
        return [
            gaussian(d["seed"] + 1, d["B"], d["T"], d["D"]).to(dtype),
            gaussian(d["seed"] + 2, d["B"], d["H"]).to(dtype),
        ]

    @staticmethod
    def out_shape(d):
        return (d["B"], d["T"], d["H"])

    @staticmethod
    def expected(w, x_seq, h):
        return ref.rnn_layer_states(
            x_seq,
            h,
            w["cell.input_to_hidden.weight"],
            w["cell.input_to_hidden.bias"],
            w["cell.hidden_to_hidden.weight"],
            w["cell.hidden_to_hidden.bias"],
        )


class Model:
    name, classes = "RNNLanguageModel", {"RNNLayer": RNN_LAYER}
    hint = (
        "Name the parts embedding (nn.Embedding), layers (nn.ModuleList of RNNLayer: embed_dim -> hidden_dim "
        "first, then hidden_dim -> hidden_dim) and classification_head (nn.Linear(hidden_dim, vocab_size))."
    )

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


def change_vector(args, j, d):
    x_seq, h = args
    x_seq = x_seq.clone()
    x_seq[:, j] += 1.5
    return [x_seq, h]


def change_token(args, j, d):
    tokens = args[0].clone()
    tokens[:, j] = (tokens[:, j] + 1) % d["V"]
    return [tokens]
