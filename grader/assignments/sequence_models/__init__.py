"""The ``sequence_models`` assignment: AR models, the recurrent unit and its forward pass, masked attention."""

from __future__ import annotations

import reference as ref
from grader.checking.exercise import Assignment, Check, Exercise

from . import answers as A
from . import attention as T
from . import autoregressive as AR
from . import costs
from . import recurrent as R
from .stand_ins import other_unit

ASSIGNMENT = Assignment(
    id="sequence_models",
    notebook="sequence_models.ipynb",
    modules=("selfcheck",),
    exercises=(
        Exercise(
            "seq2col",
            "function",
            (
                Check(
                    AR.check_seq2col_shapes_and_dtype,
                    0.5,
                    "X has one row per window that has a successor: n - s rows.",
                    judges="format",
                ),
                Check(AR.check_seq2col_windows, 1.5, "Check the first and last rows against the definition by hand."),
                Check(
                    AR.check_seq2col_leaves_input_unchanged,
                    0.5,
                    "Copy before writing into arrays you were given.",
                    judges="own",
                ),
                Check(
                    AR.check_seq2col_rejects_bad_filter_size,
                    0.5,
                    "Validate filter_size before building X.",
                    judges="own",
                ),
            ),
            probe=AR.PROBE_SEQ2COL,
            reference=ref.seq2col,
            cost=costs.seq2col_cost,
        ),
        Exercise(
            "ar_fit",
            "function",
            (
                Check(
                    AR.check_ar_fit_least_squares,
                    1.0,
                    "Append a column of ones to X for the bias, then solve least squares.",
                ),
                Check(AR.check_ar_fit_minimum_norm, 1.0, "np.linalg.pinv (or lstsq) picks the smallest-norm solution."),
            ),
            requires=("seq2col",),
            probe=AR.PROBE_AR_FIT,
            reference=ref.ar_fit,
            cost=costs.ar_fit_cost,
        ),
        Exercise("ar_fit_interpretation", "manual", manual_points=2.0),
        Exercise(
            "recurrent_unit",
            "function",
            (
                Check(R.check_recurrent_unit_values, 1.5, "Row vectors: multiply by the transposed weight matrices."),
                Check(
                    R.check_recurrent_unit_single_example,
                    0.5,
                    "x @ Win.T works for both (d_in,) and (B, d_in).",
                    judges="own",
                    hints={
                        "raised": "x @ Win.T and h_prev @ Wrec.T work for both (d_in,) and (B, d_in) inputs; "
                        "avoid indexing or transposing the batch axis."
                    },
                ),
                Check(
                    R.check_recurrent_unit_gradients,
                    1.0,
                    "Use torch operations only, so autograd can follow them.",
                    judges="own",
                ),
            ),
            probe=R.PROBE_RECURRENT_UNIT,
            reference=ref.recurrent_unit,
            cost=costs.unit_cost,
            # forward is graded with a unit that is not the course's (see other_unit)
            stand_in=other_unit,
        ),
        Exercise(
            "ar_as_recurrent",
            "function",
            (
                Check(
                    R.check_ar_as_recurrent_shapes,
                    0.5,
                    "One hidden unit per remembered input is enough.",
                    judges="format",
                ),
                Check(
                    R.check_ar_as_recurrent_reproduces_ar_model,
                    1.5,
                    "Let the hidden state hold the last s inputs; Wrec shifts them by one each step.",
                ),
            ),
            probe=R.PROBE_AR_AS_RECURRENT,
            reference=ref.ar_as_recurrent,
            cost=costs.constant_cost,
        ),
        Exercise(
            "forward",
            "function",
            (
                Check(R.check_forward_composes_recurrent_unit, 1.5, "Start from h = 0 and feed seqs[:, t] at step t."),
                Check(
                    R.check_forward_gradients,
                    0.5,
                    "Keep every step in torch so autograd can follow the loop.",
                    judges="own",
                ),
                Check(
                    R.check_forward_batch_permutation_equivariance,
                    0.5,
                    "Treat every row of the batch the same way.",
                    judges="own",
                ),
                Check(
                    R.check_forward_batch_independence,
                    0.5,
                    "Do not mix information between sequences of the batch.",
                    judges="own",
                ),
                Check(
                    R.check_forward_is_vectorized,
                    1.0,
                    "Loop over time only; each step handles the whole batch.",
                    judges="own",
                ),
            ),
            requires=("recurrent_unit",),
            probe=R.PROBE_FORWARD,
            reference=ref.forward,
            cost=costs.forward_cost,
        ),
        Exercise("CAUSAL_MASK_CHOICE", "answer", (Check(A.check_answer_causal_mask_choice, 1.0),)),
        Exercise("SELF_ATTENTION_IS_CAUSAL", "answer", (Check(A.check_answer_self_attention_is_causal, 1.0),)),
        Exercise(
            "causal_mask",
            "function",
            (
                Check(
                    T.check_causal_mask_shape_and_dtype,
                    0.5,
                    "torch.zeros(T, T) has the right shape and dtype.",
                    judges="format",
                ),
                Check(
                    T.check_causal_mask_values,
                    1.5,
                    "Use float('-inf') strictly above the diagonal (torch.triu with diagonal=1).",
                ),
            ),
            probe=T.PROBE_CAUSAL_MASK,
            reference=ref.causal_mask,
            cost=costs.mask_cost,
        ),
        Exercise(
            "masked_self_attention",
            "function",
            (
                Check(
                    T.check_masked_self_attention_values,
                    1.0,
                    "Scale by 1/sqrt(d_k), add the mask, softmax over the keys (last axis).",
                ),
                Check(
                    T.check_masked_self_attention_single_sequence,
                    0.25,
                    "Treat sequence b of a batch as you treat it alone.",
                    judges="own",
                    hints={
                        "raised": "Transpose the last two axes of K (K.transpose(-2, -1)), not the first two, "
                        "so the same code works for (T, d) and (B, T, d)."
                    },
                ),
                Check(
                    T.check_masked_self_attention_causality,
                    1.0,
                    "The mask must be added before the softmax.",
                    judges="own",
                ),
                Check(
                    T.check_masked_self_attention_gradients,
                    0.5,
                    "Use torch operations only, so autograd can follow them.",
                    judges="own",
                ),
                Check(
                    T.check_masked_self_attention_half_precision,
                    0.25,
                    "Compute in the input's dtype; float16 has about 3 significant digits.",
                    judges="own",
                ),
            ),
            requires=("causal_mask",),
            probe=T.PROBE_MASKED_SELF_ATTENTION,
            reference=ref.masked_self_attention,
            cost=costs.self_attention_cost,
        ),
        Exercise("QKV_PARAM_COUNT", "answer", (Check(A.check_answer_qkv_param_count, 1.0),)),
        Exercise(
            "qkv_param_count",
            "function",
            (Check(T.check_qkv_param_count_matches_torch, 1.0, "The projections have no bias here."),),
            probe=T.PROBE_QKV_PARAM_COUNT,
            reference=ref.qkv_param_count,
            cost=costs.constant_cost,
        ),
        Exercise(
            "mha_param_count",
            "function",
            (
                Check(
                    T.check_mha_param_count_matches_torch,
                    1.5,
                    "Heads split d_model; the output projection counts too, and so do biases when bias=True.",
                ),
                Check(
                    T.check_mha_param_count_rejects_indivisible_heads,
                    0.5,
                    "Raise ValueError before counting.",
                    judges="own",
                ),
            ),
            probe=T.PROBE_MHA_PARAM_COUNT,
            reference=ref.mha_param_count,
            cost=costs.constant_cost,
        ),
    ),
)
