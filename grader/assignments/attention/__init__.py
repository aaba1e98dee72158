"""The ``attention`` assignment: scaled dot-product, self- and multi-head attention, positions, norms, the block."""

from __future__ import annotations

from grader.checking.exercise import Assignment, Check, Exercise
from reference import transformer as ref

from . import answers as A
from . import block as BL
from . import costs
from . import heads as MH
from . import norms as N
from . import sdpa as S
from . import self_attention as SA

AUTOGRAD = "Use torch operations on the inputs only, so autograd can follow them."

ASSIGNMENT = Assignment(
    id="attention",
    notebook="attention.ipynb",
    modules=("selfcheck",),
    exercises=(
        Exercise(
            "scaled_dot_product_attention",
            "function",
            (
                Check(
                    S.check_sdpa_returns_output_and_weights,
                    0.5,
                    "Return the pair (Y, A), both in the inputs' dtype.",
                    judges="format",
                ),
                Check(
                    S.check_sdpa_values,
                    2.0,
                    "scores = Q @ K.transpose(-2, -1) / sqrt(dk); fill -inf where mask is "
                    "False; softmax over the last axis; Y = A @ V.",
                    hints={
                        "raised": "Use K.transpose(-2, -1) (not K.T) so that leading axes pass through, and let the "
                        "mask broadcast against the scores (masked_fill(~mask, float('-inf')))."
                    },
                ),
                Check(
                    S.check_sdpa_weights_are_distributions, 1.0, "Softmax over the keys, after masking.", judges="own"
                ),
                Check(
                    S.check_sdpa_fully_masked_row,
                    0.5,
                    "A query with no allowed key gets zero weights and a zero output.",
                    judges="own",
                ),
                Check(
                    S.check_sdpa_query_permutation_equivariance,
                    0.5,
                    "Treat every query the same way, whatever its row.",
                    judges="own",
                ),
                Check(
                    S.check_sdpa_key_value_permutation_invariance,
                    0.5,
                    "Weight each value by its own key's score.",
                    judges="own",
                ),
                Check(S.check_sdpa_gradients, 1.0, AUTOGRAD, judges="own"),
            ),
            probe=S.PROBE_SDPA,
            reference=ref.scaled_dot_product_attention,
            cost=costs.sdpa_cost,
        ),
        Exercise(
            "self_attention",
            "function",
            (
                Check(
                    SA.check_self_attention_values,
                    2.0,
                    "Project X with Wq, Wk, Wv and pass the three to "
                    "scaled_dot_product_attention (no mask); return only Y.",
                ),
                Check(
                    SA.check_self_attention_permutation_equivariance,
                    1.0,
                    "Do not use the positions' indices.",
                    judges="own",
                ),
                Check(
                    SA.check_self_attention_single_sequence,
                    0.5,
                    "The same code must work for (N, D) and (B, N, D).",
                    judges="own",
                ),
            ),
            requires=("scaled_dot_product_attention",),
            probe=SA.PROBE_SELF_ATTENTION,
            reference=ref.self_attention,
            cost=costs.self_attention_cost,
        ),
        Exercise(
            "sinusoidal_positions",
            "function",
            (
                Check(
                    SA.check_sinusoidal_positions_shape_and_dtype,
                    0.5,
                    "torch.zeros(T, d) has the right shape and dtype.",
                    judges="format",
                ),
                Check(
                    SA.check_sinusoidal_positions_values,
                    2.0,
                    "Even columns 2i: sin(t / 10000^(2i/d)); odd columns 2i+1: cos of the same angle; t starts at 0.",
                ),
            ),
            probe=SA.PROBE_SINUSOIDAL_POSITIONS,
            reference=ref.sinusoidal_positions,
            cost=costs.generic_cost,
        ),
        Exercise("EQUIVARIANT_WITH_POSITIONS", "answer", (Check(A.check_answer_equivariant_with_positions, 1.5),)),
        Exercise(
            "multi_head_attention",
            "function",
            (
                Check(
                    MH.check_mha_values,
                    3.5,
                    "Split each projection into heads of Dh = H*Dh / H columns, in order; "
                    "attend per head; concatenate the heads in order; multiply by Wo.",
                ),
                Check(MH.check_mha_causality, 1.5, "Pass the mask to every head's attention.", judges="own"),
                Check(
                    MH.check_mha_permutation_equivariance,
                    0.5,
                    "Reshape so that positions are never mixed together.",
                    judges="own",
                ),
                Check(MH.check_mha_rejects_indivisible_heads, 0.5, "Raise ValueError before reshaping.", judges="own"),
            ),
            requires=("scaled_dot_product_attention",),
            probe=MH.PROBE_MULTI_HEAD_ATTENTION,
            reference=ref.multi_head_attention,
            cost=costs.mha_cost,
        ),
        Exercise("SWAP_POLL_OUTPUT", "answer", (Check(A.check_answer_swap_poll_output, 2.0),)),
        Exercise(
            "layer_norm",
            "function",
            (
                Check(
                    N.check_layer_norm_values,
                    2.0,
                    "Normalise over the last axis with the biased variance, eps inside "
                    "the square root, then * gamma + beta.",
                ),
                Check(N.check_layer_norm_gradients, 1.0, AUTOGRAD, judges="own"),
            ),
            probe=N.PROBE_LAYER_NORM,
            reference=ref.layer_norm,
            cost=costs.generic_cost,
        ),
        Exercise(
            "rms_norm",
            "function",
            (
                Check(N.check_rms_norm_values, 1.5, "x / sqrt(mean(x^2, last axis) + eps) * gamma."),
                Check(N.check_rms_norm_gradients, 0.5, AUTOGRAD, judges="own"),
            ),
            probe=N.PROBE_RMS_NORM,
            reference=ref.rms_norm,
            cost=costs.generic_cost,
        ),
        Exercise(
            "swiglu",
            "function",
            (
                Check(N.check_swiglu_values, 1.5, "(silu(x @ W1) * (x @ W2)) @ W3."),
                Check(N.check_swiglu_gradients, 0.5, AUTOGRAD, judges="own"),
            ),
            probe=N.PROBE_SWIGLU,
            reference=ref.swiglu,
            cost=costs.generic_cost,
        ),
        Exercise(
            "transformer_block",
            "function",
            (
                Check(
                    BL.check_transformer_block_values,
                    3.5,
                    "Pre-norm: h = x + MHA(LN1(x)), y = h + MLP(LN2(h)), MLP(z) = relu(z W1 + b1) W2 + b2.",
                ),
                Check(
                    BL.check_transformer_block_causality,
                    1.5,
                    "With causal=True pass a causal bool mask to multi_head_attention.",
                    judges="own",
                ),
                Check(
                    BL.check_transformer_block_permutation_equivariance,
                    1.5,
                    "Use no position-dependent operation.",
                    judges="own",
                ),
            ),
            requires=("layer_norm", "multi_head_attention"),
            probe=BL.PROBE_TRANSFORMER_BLOCK,
            reference=ref.transformer_block,
            cost=costs.block_cost,
        ),
        Exercise(
            "attention_weights_bytes",
            "function",
            (Check(BL.check_attention_weights_bytes_values, 2.0, "H matrices of N x N weights."),),
            probe=BL.PROBE_ATTENTION_WEIGHTS_BYTES,
            reference=ref.attention_weights_bytes,
            cost=costs.constant_cost,
        ),
        Exercise(
            "block_param_count",
            "function",
            (
                Check(
                    BL.check_block_param_count_matches_torch,
                    3.0,
                    "Count every module's weights and biases: four attention "
                    "projections, the two MLP layers (D -> 4D -> D) and the two LayerNorms.",
                ),
            ),
            probe=BL.PROBE_BLOCK_PARAM_COUNT,
            reference=ref.block_param_count,
            cost=costs.constant_cost,
        ),
    ),
)
