"""The ``lm_modules`` assignment: the lecture's RNN as torch.nn modules (a cell, a layer, a multi-layer
language model), and sampling from a language model (one token, then a whole continuation).

The classes are graded by handle (grader.checking.modules); RNNLayer with the grader's RecurrentCell and
RNNLanguageModel with the grader's RNNLayer (stand-in classes). The random functions are graded by the
distribution of their draws, with the grader's seeded generators (grader.assignments.lm_modules.sampling)."""

from __future__ import annotations

from grader.checking.exercise import Assignment, Check, Exercise
from reference import lm_modules as ref

from . import answers as A
from . import costs
from . import generate_checks as G
from . import recurrent_modules as M
from . import sample_next_checks as S
from .stand_ins import RECURRENT_CELL, RNN_LAYER

GRADIENT_HINT = "Use torch operations only (no .detach(), .item() or numpy), so autograd follows every step."
STATE_HINT = "Keep nothing from one forward call to the next: start every sequence from the h you were given."

ASSIGNMENT = Assignment(
    id="lm_modules",
    notebook="lm_modules.ipynb",
    modules=("selfcheck",),
    exercises=(
        Exercise(
            "RecurrentCell",
            "class",
            (
                Check(M.check_recurrent_cell_parameters, 1.0, M.Cell.hint, judges="format"),
                Check(M.check_recurrent_cell_values, 3.0, M.CELL_HINT),
                Check(M.check_recurrent_cell_gradients, 1.0, GRADIENT_HINT, judges="own"),
                Check(
                    M.check_recurrent_cell_batch_equivariance,
                    1.0,
                    "Treat every row of the batch the same way.",
                    judges="own",
                ),
                Check(
                    M.check_recurrent_cell_dtypes,
                    0.5,
                    "Create no tensors of a fixed dtype: let the Linear layers and the inputs decide it.",
                    judges="own",
                ),
                Check(M.check_recurrent_cell_is_stateless, 0.5, STATE_HINT, judges="own"),
            ),
            probe=M.probe_recurrent_cell,
            reference=ref.RecurrentCell,
            stand_in=RECURRENT_CELL,
        ),
        Exercise(
            "RNNLayer",
            "class",
            (
                Check(M.check_rnn_layer_parameters, 1.0, M.Layer.hint, judges="format"),
                Check(M.check_rnn_layer_values, 3.0, M.LAYER_HINT),
                Check(
                    M.check_rnn_layer_causality, 1.0, "The state at time t may use x_seq[:, :t + 1] only.", judges="own"
                ),
                Check(M.check_rnn_layer_gradients, 1.0, GRADIENT_HINT, judges="own"),
                Check(M.check_rnn_layer_is_stateless, 1.0, STATE_HINT, judges="own"),
            ),
            probe=M.probe_rnn_layer,
            reference=ref.RNNLayer,
            stand_in=RNN_LAYER,
        ),
        Exercise(
            "RNNLanguageModel",
            "class",
            (
                Check(M.check_language_model_parameters, 1.5, M.Model.hint, judges="format"),
                Check(M.check_language_model_values, 3.5, M.LM_HINT),
                Check(
                    M.check_language_model_causality,
                    1.5,
                    "The logits at position t may use tokens 0..t only.",
                    judges="own",
                ),
                Check(
                    M.check_language_model_batch_equivariance,
                    1.0,
                    "Treat every sequence of the batch the same way.",
                    judges="own",
                ),
                Check(M.check_language_model_gradients, 1.0, GRADIENT_HINT, judges="own"),
                Check(
                    M.check_language_model_dtypes,
                    0.5,
                    "Start each layer from h = zeros with the embeddings' dtype "
                    "(x.new_zeros(...)), not a fixed float32 tensor.",
                    judges="own",
                ),
            ),
            probe=M.probe_language_model,
            reference=ref.RNNLanguageModel,
        ),
        Exercise(
            "sample_next",
            "function",
            (
                Check(
                    S.check_sample_next_shape,
                    0.5,
                    "Return one token id per row: a (B,) torch.long tensor.",
                    judges="format",
                ),
                Check(
                    S.check_sample_next_distribution,
                    2.0,
                    "Draw from softmax(logits / temperature): torch.multinomial(probs, 1, generator=generator).",
                ),
                Check(S.check_sample_next_temperature, 2.0, "Divide the logits by the temperature before the softmax."),
                Check(
                    S.check_sample_next_temperature_zero_is_argmax,
                    1.5,
                    "Temperature 0 means no randomness: return logits.argmax(dim=-1).",
                ),
                Check(
                    S.check_sample_next_reproducible,
                    1.0,
                    "Draw with the generator you were given (generator=generator), never the global random state.",
                    judges="own",
                ),
            ),
            probe=S.probe_sample_next,
            call_cpu_s=1.0,
            reference=ref.sample_next,
            cost=costs.generic_cost,
        ),
        Exercise(
            "generate",
            "function",
            (
                Check(
                    G.check_generate_shape_and_prefix,
                    0.5,
                    "Start from the prefix and append one column per new token.",
                    judges="format",
                ),
                Check(
                    G.check_generate_distribution,
                    2.5,
                    "At each step call the model on all tokens so far and sample from logits[:, -1, :].",
                ),
                Check(G.check_generate_greedy, 1.5, "With temperature 0, take the argmax at every step."),
                Check(G.check_generate_reproducible, 1.5, "Pass the generator to every draw.", judges="own"),
            ),
            probe=G.probe_generate,
            call_cpu_s=1.0,
            reference=ref.generate,
            cost=costs.generic_cost,
        ),
        Exercise(
            "temperature_effect",
            "answer",
            (Check(A.check_answer_temperature_effect, 1.5, "Compare softmax(logits / T) for a small and a large T."),),
        ),
        Exercise(
            "why_sample",
            "answer",
            (Check(A.check_answer_why_sample, 1.5, "Think of what greedy decoding does twice from one prefix."),),
        ),
    ),
)
