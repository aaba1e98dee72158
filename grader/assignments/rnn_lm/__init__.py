"""The ``rnn_lm`` assignment: an LSTM cell, a recurrent language model, n-gram counts, encoder-decoder
attention and causal (dilated) convolutions."""

from __future__ import annotations

from grader.checking.exercise import Assignment, Check, Exercise
from reference import rnn_lm as ref

from . import answers as A
from . import convolution as C
from . import costs
from . import encoder_decoder as ED
from . import language_model as LM
from . import lstm as L
from . import ngrams as N

KEY_HINTS = {"type": "Key the table by tuples, tuple(tokens[i:i + n - 1]), even for a one-word context ('cows',)."}

ASSIGNMENT = Assignment(
    id="rnn_lm",
    notebook="rnn_lm.ipynb",
    modules=("selfcheck",),
    exercises=(
        Exercise(
            "lstm_cell",
            "function",
            (
                Check(
                    L.check_lstm_cell_shapes,
                    0.5,
                    "Return the tuple (h_next, c_next), each of shape (B, H).",
                    judges="format",
                ),
                Check(
                    L.check_lstm_cell_matches_torch,
                    2.5,
                    "z = cat([h, x], dim=1) @ W.T + b; split it into i, f, o, g (in that order).",
                ),
                Check(
                    L.check_lstm_cell_keeps_memory,
                    1.0,
                    "c' = f * c + i * g: the forget gate scales the old cell.",
                    judges="own",
                ),
                Check(
                    L.check_lstm_cell_batch_permutation_equivariance,
                    1.0,
                    "Treat every example of the batch the same way; never mix rows.",
                    judges="own",
                ),
                Check(
                    L.check_lstm_cell_gradients,
                    1.0,
                    "Use torch operations only, so autograd can follow them.",
                    judges="own",
                    hints={
                        "raised": "Use torch operations only: .numpy() and np.* cannot follow "
                        "gradients (the grader calls lstm_cell on tensors that require grad)."
                    },
                ),
            ),
            probe=L.PROBE_LSTM_CELL,
            reference=ref.lstm_cell,
            cost=costs.generic_cost,
        ),
        Exercise(
            "rnn_lm_states",
            "function",
            (
                Check(LM.check_rnn_lm_states_shape, 0.5, "Stack one state per token: shape (T, H).", judges="format"),
                Check(
                    LM.check_rnn_lm_states_values, 1.5, "Start from h = 0; h_t = tanh(E[x_t] @ W_xh + h @ W_hh + b_h)."
                ),
                Check(LM.check_rnn_lm_states_causality, 1.0, "The state at t may use tokens 0..t only.", judges="own"),
                Check(
                    LM.check_rnn_lm_states_gradients,
                    1.0,
                    "Keep every step in torch so autograd can follow the loop.",
                    judges="own",
                ),
            ),
            probe=LM.PROBE_RNN_LM_STATES,
            reference=ref.rnn_lm_states,
            cost=costs.rnn_lm_cost,
        ),
        Exercise(
            "rnn_lm_loss",
            "function",
            (
                Check(
                    LM.check_rnn_lm_loss_is_scalar, 0.5, "Return the summed loss as a 0-dim tensor.", judges="format"
                ),
                Check(
                    LM.check_rnn_lm_loss_matches_torch,
                    2.5,
                    "logits = states[:-1] @ W_hy + b_y predict tokens[1:]; sum the cross-entropies.",
                ),
                Check(
                    LM.check_rnn_lm_loss_gradients,
                    1.0,
                    "Use torch operations only, so autograd can follow them.",
                    judges="own",
                ),
            ),
            requires=("rnn_lm_states",),
            probe=LM.PROBE_RNN_LM_LOSS,
            reference=ref.rnn_lm_loss,
            cost=costs.generic_cost,
        ),
        Exercise(
            "ngram_probs",
            "function",
            (
                Check(
                    N.check_ngram_probs_structure,
                    0.5,
                    "Keys are tuples of n - 1 words; values are dicts word -> float.",
                    judges="format",
                    hints=KEY_HINTS,
                ),
                Check(
                    N.check_ngram_probs_matches_counts,
                    3.5,
                    "Count each (context, next word) pair and divide by how often the context is followed by a word.",
                ),
                Check(
                    N.check_ngram_probs_sum_to_one,
                    1.0,
                    "Divide each context's counts by that context's total.",
                    judges="own",
                    hints=KEY_HINTS,
                ),
            ),
            probe=N.PROBE_NGRAM_PROBS,
            reference=ref.ngram_probs,
            cost=costs.token_loop_cost,
        ),
        Exercise(
            "sequence_log_prob",
            "function",
            (
                Check(
                    N.check_sequence_log_prob_values,
                    2.0,
                    "Add math.log(probs[(prev,)][word]) for every token after the first.",
                ),
                Check(
                    N.check_sequence_log_prob_unseen_is_minus_inf,
                    1.0,
                    "Return float('-inf') when a context or a bigram is missing from the table.",
                ),
            ),
            probe=N.PROBE_SEQUENCE_LOG_PROB,
            reference=ref.sequence_log_prob,
            cost=costs.token_loop_cost,
        ),
        Exercise(
            "encoder_decoder_context",
            "function",
            (
                Check(
                    ED.check_encoder_decoder_context_shape,
                    0.5,
                    "One context vector per decoder state: (T_dec, d).",
                    judges="format",
                ),
                Check(
                    ED.check_encoder_decoder_context_values,
                    2.5,
                    "torch.softmax(S @ H.T, dim=-1) @ H: the softmax over the encoder positions.",
                ),
                Check(
                    ED.check_encoder_decoder_context_weights_sum_to_one,
                    1.0,
                    "Each decoder state's weights over the encoder states must sum to 1 (softmax over dim=-1).",
                    judges="own",
                ),
                Check(
                    ED.check_encoder_decoder_context_encoder_order,
                    1.0,
                    "Weigh encoder states by their scores only, never by their index.",
                    judges="own",
                ),
            ),
            probe=ED.PROBE_ENCODER_DECODER_CONTEXT,
            reference=ref.encoder_decoder_context,
            cost=costs.context_cost,
        ),
        Exercise(
            "causal_conv1d",
            "function",
            (
                Check(
                    C.check_causal_conv1d_shape,
                    0.5,
                    "The output has one value per input position: shape (T,).",
                    judges="format",
                ),
                Check(
                    C.check_causal_conv1d_values, 2.5, "y[t] = sum_k w[k] * x[t - k * dilation], zero before the start."
                ),
                Check(
                    C.check_causal_conv1d_causality,
                    1.0,
                    "Pad (K - 1) * dilation zeros on the left, never on the right.",
                    judges="own",
                ),
                Check(
                    C.check_causal_conv1d_gradients,
                    1.0,
                    "Use torch operations only, so autograd can follow them.",
                    judges="own",
                ),
            ),
            probe=C.PROBE_CAUSAL_CONV1D,
            reference=ref.causal_conv1d,
            cost=costs.generic_cost,
        ),
        Exercise(
            "receptive_field",
            "function",
            (
                Check(
                    C.check_receptive_field_values, 2.0, "Each layer adds (K - 1) * dilation to the span; start from 1."
                ),
            ),
            probe=C.PROBE_RECEPTIVE_FIELD,
            reference=ref.receptive_field,
            cost=costs.constant_cost,
        ),
        Exercise("TEACHER_FORCING_PARALLEL", "answer", (Check(A.check_answer_teacher_forcing_parallel, 2.0),)),
        Exercise("LSTM_PARAM_COUNT", "answer", (Check(A.check_answer_lstm_param_count, 2.0),)),
    ),
)
