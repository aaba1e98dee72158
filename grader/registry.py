"""The exercise registry: every assignment, its exercises, their checks and points, in one place.

Points here are the single source of truth: the notebook's autograded cells must carry the same
points (a test compares them), and ``seqgrade list`` prints them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .checks import answers as A
from .checks import attention as T
from .checks import autoregressive as AR
from .checks import recurrent as R
from .errors import UnknownAssignment


@dataclass(frozen=True)
class Check:
    func: Callable
    points: float
    hint: str = ""

    @property
    def name(self) -> str:
        return self.func.__name__

    @property
    def property(self) -> str:
        return (self.func.__doc__ or "").strip().splitlines()[0]


@dataclass(frozen=True)
class Exercise:
    id: str  # the function or answer variable the student defines; also the notebook's grade_id
    kind: str  # "function", "answer" or "manual"
    checks: tuple[Check, ...] = ()
    manual_points: float = 0.0
    requires: tuple[str, ...] = ()  # other student definitions this exercise calls

    @property
    def points(self) -> float:
        return self.manual_points if self.kind == "manual" else sum(c.points for c in self.checks)


@dataclass(frozen=True)
class Assignment:
    id: str
    notebook: str
    exercises: tuple[Exercise, ...]

    @property
    def max_score(self) -> float:
        return sum(e.points for e in self.exercises)

    def exercise(self, exercise_id: str) -> Exercise:
        for e in self.exercises:
            if e.id == exercise_id:
                return e
        raise KeyError(f"{self.id} has no exercise {exercise_id!r}")


SEQUENCE_MODELS = Assignment(
    id="sequence_models",
    notebook="sequence_models.ipynb",
    exercises=(
        Exercise("seq2col", "function", (
            Check(AR.check_seq2col_shapes_and_dtype, 0.5, "X has one row per window that has a successor: n - s rows."),
            Check(AR.check_seq2col_windows, 1.5, "Check the first and last rows against the definition by hand."),
            Check(AR.check_seq2col_leaves_input_unchanged, 0.5, "Copy before writing into arrays you were given."),
            Check(AR.check_seq2col_rejects_bad_filter_size, 0.5, "Validate filter_size before building X."),
        )),
        Exercise("ar_fit", "function", (
            Check(AR.check_ar_fit_least_squares, 1.0, "Append a column of ones to X for the bias, then solve least squares."),
            Check(AR.check_ar_fit_minimum_norm, 1.0, "np.linalg.pinv (or lstsq) picks the smallest-norm solution."),
        ), requires=("seq2col",)),
        Exercise("ar_fit_interpretation", "manual", manual_points=2.0),
        Exercise("recurrent_unit", "function", (
            Check(R.check_recurrent_unit_values, 1.5, "Row vectors: multiply by the transposed weight matrices."),
            Check(R.check_recurrent_unit_single_example, 0.5, "x @ Win.T works for both (d_in,) and (B, d_in)."),
            Check(R.check_recurrent_unit_gradients, 1.0, "Use torch operations only, so autograd can follow them."),
        )),
        Exercise("ar_as_recurrent", "function", (
            Check(R.check_ar_as_recurrent_shapes, 0.5, "One hidden unit per remembered input is enough."),
            Check(R.check_ar_as_recurrent_reproduces_ar_model, 1.5,
                  "Let the hidden state hold the last s inputs; Wrec shifts them by one each step."),
        )),
        Exercise("forward", "function", (
            Check(R.check_forward_matches_own_recurrent_unit, 1.5, "Start from h = 0 and feed seqs[:, t] at step t."),
            Check(R.check_forward_gradients, 0.5, "Keep every step in torch so autograd can follow the loop."),
            Check(R.check_forward_batch_permutation_equivariance, 0.5, "Treat every row of the batch the same way."),
            Check(R.check_forward_batch_independence, 0.5, "Do not mix information between sequences of the batch."),
            Check(R.check_forward_is_vectorized, 1.0, "Loop over time only; each step handles the whole batch."),
        ), requires=("recurrent_unit",)),
        Exercise("CAUSAL_MASK_CHOICE", "answer", (Check(A.check_answer_causal_mask_choice, 1.0),)),
        Exercise("SELF_ATTENTION_IS_CAUSAL", "answer", (Check(A.check_answer_self_attention_is_causal, 1.0),)),
        Exercise("causal_mask", "function", (
            Check(T.check_causal_mask_shape_and_dtype, 0.5, "torch.zeros(T, T) has the right shape and dtype."),
            Check(T.check_causal_mask_values, 1.5, "Use float('-inf') strictly above the diagonal (torch.triu with diagonal=1)."),
        )),
        Exercise("masked_self_attention", "function", (
            Check(T.check_masked_self_attention_values, 1.0, "Scale by 1/sqrt(d_k), add the mask, softmax over the keys (last axis)."),
            Check(T.check_masked_self_attention_single_sequence, 0.25, "Transpose the last two axes of K, not the first two."),
            Check(T.check_masked_self_attention_causality, 1.0, "The mask must be added before the softmax."),
            Check(T.check_masked_self_attention_gradients, 0.5, "Use torch operations only, so autograd can follow them."),
            Check(T.check_masked_self_attention_half_precision, 0.25,
                  "A finite stand-in for -inf such as -1e9 does not fit in float16; use float('-inf')."),
        ), requires=("causal_mask",)),
        Exercise("QKV_PARAM_COUNT", "answer", (Check(A.check_answer_qkv_param_count, 1.0),)),
        Exercise("qkv_param_count", "function", (
            Check(T.check_qkv_param_count_matches_torch, 1.0, "The projections have no bias here."),
        )),
        Exercise("mha_param_count", "function", (
            Check(T.check_mha_param_count_matches_torch, 1.5,
                  "Heads split d_model; the output projection counts too, and so do biases when bias=True."),
            Check(T.check_mha_param_count_rejects_indivisible_heads, 0.5, "Raise ValueError before counting."),
        )),
    ),
)

ASSIGNMENTS: dict[str, Assignment] = {SEQUENCE_MODELS.id: SEQUENCE_MODELS}


def get_assignment(name: str) -> Assignment:
    try:
        return ASSIGNMENTS[name]
    except KeyError:
        raise UnknownAssignment(name, sorted(ASSIGNMENTS)) from None
