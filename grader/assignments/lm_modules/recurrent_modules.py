"""Checks for the lm_modules classes: RecurrentCell, RNNLayer and RNNLanguageModel, each built by the grader
in the student's process (grader.checking.modules). RNNLayer is graded with the grader's RecurrentCell and
RNNLanguageModel with the grader's RNNLayer (stand-in classes, grader.checking.standins), so a wrong cell costs only
the cell's exercise. The properties they share are in grader.assignments.lm_modules.module_properties, what each
class is in grader.assignments.lm_modules.module_kinds."""

from __future__ import annotations

from grader.checking.templates import check

from .module_kinds import (
    CELL_SMALL,
    LAYER_SMALL,
    LM_SMALL,
    Cell,
    Layer,
    Model,
    cell_dims,
    change_token,
    change_vector,
    layer_dims,
    lm_dims,
    probe_language_model,
    probe_recurrent_cell,
    probe_rnn_layer,
)
from .module_properties import batch_equivariance, causality, dtypes, gradients, parameters, stateless, values

__all__ = [
    "probe_recurrent_cell",
    "probe_rnn_layer",
    "probe_language_model",
]  # the exercises' probes, declared here too

# The settings of each class's checks (what it is, its sizes and its small example). Batch equivariance and
# causality stay in module_properties, not grader.checking.positions: they build a class by handle and compare
# at the module's precision, where positions' templates call a function.
CELL = {"kind": Cell, "dims": cell_dims(), "small": CELL_SMALL}
LAYER = {"kind": Layer, "dims": layer_dims(), "small": LAYER_SMALL}
MODEL = {"kind": Model, "dims": lm_dims(), "small": LM_SMALL}

# --- RecurrentCell -------------------------------------------------------------------------------------------

CELL_HINT = "h = relu(input_to_hidden(x) + hidden_to_hidden(h_prev)): both Linear layers, with their biases, then relu."


check_recurrent_cell_parameters = check(
    parameters,
    "check_recurrent_cell_parameters",
    """RecurrentCell(D, H).state_dict() holds input_to_hidden and hidden_to_hidden weights and biases of the course's
    shapes.

    Always judged.
    """,
    **CELL,
)


check_recurrent_cell_values = check(
    values,
    "check_recurrent_cell_values",
    """RecurrentCell with the grader's weights computes relu(input_to_hidden(x) + hidden_to_hidden(h_prev)).

    Not judged when the class does not lay out its parameters as the course's, or the numbers loaded do not decide what
    it computes (the parameters check charges both).
    """,
    **CELL,
    hint=CELL_HINT,
)


check_recurrent_cell_gradients = check(
    gradients,
    "check_recurrent_cell_gradients",
    """RecurrentCell's gradients (inputs and parameters) agree with finite differences of the student's own module.

    Not judged when its result does not have the form the exercise asks for, or the numbers the grader loads do not
    decide what it computes (the parameters check charges that).
    """,
    **CELL,
    wrt=[0, 1],
)


check_recurrent_cell_batch_equivariance = check(
    batch_equivariance,
    "check_recurrent_cell_batch_equivariance",
    """Reordering the batch rows of x and h_prev reorders the rows of RecurrentCell's result the same way.

    Not judged when the result does not have the form the exercise asks for (the values or shape check charges that), or
    the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """,
    **CELL,
)


check_recurrent_cell_dtypes = check(
    dtypes,
    "check_recurrent_cell_dtypes",
    """RecurrentCell computes in float32 as built and in float64 after .double().

    Not judged when the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """,
    **CELL,
)


check_recurrent_cell_is_stateless = check(
    stateless,
    "check_recurrent_cell_is_stateless",
    """RecurrentCell gives the same result for the same inputs whatever was computed before, in train() and eval().

    Not judged when the result does not have the form the exercise asks for (the values or shape check charges that).
    """,
    **CELL,
)


# --- RNNLayer ----------------------------------------------------------------------------------------------------

LAYER_HINT = "Loop t = 0..T-1: h = self.cell(x_seq[:, t], h); stack every h along dim 1 into (B, T, H)."


check_rnn_layer_parameters = check(
    parameters,
    "check_rnn_layer_parameters",
    """RNNLayer(D, H).state_dict() holds exactly its cell's parameters, named cell.*.

    Always judged.
    """,
    **LAYER,
)


check_rnn_layer_values = check(
    values,
    "check_rnn_layer_values",
    """RNNLayer with the grader's cell and weights returns every state h_1..h_T of the recurrence, shape (B, T, H).

    Not judged when the class does not lay out its parameters as the course's, or the numbers loaded do not decide what
    it computes (the parameters check charges both).
    """,
    **LAYER,
    hint=LAYER_HINT,
)


check_rnn_layer_causality = check(
    causality,
    "check_rnn_layer_causality",
    """RNNLayer's state at time t does not depend on inputs after t.

    Not judged when no change of an input moves any later output on any example (nothing to observe), or the result does
    not have the form the exercise asks for, or the numbers the grader loads do not decide what it computes (the
    parameters check charges that).
    """,
    **LAYER,
    change=change_vector,
)


check_rnn_layer_gradients = check(
    gradients,
    "check_rnn_layer_gradients",
    """RNNLayer's gradients (inputs and parameters) agree with finite differences of the student's own module.

    Not judged when its result does not have the form the exercise asks for, or the numbers the grader loads do not
    decide what it computes (the parameters check charges that).
    """,
    **LAYER,
    wrt=[0, 1],
)


check_rnn_layer_is_stateless = check(
    stateless,
    "check_rnn_layer_is_stateless",
    """RNNLayer gives the same result for the same inputs whatever was computed before, in train() and eval().

    Not judged when the result does not have the form the exercise asks for (the values or shape check charges that).
    """,
    **LAYER,
)


# --- RNNLanguageModel -----------------------------------------------------------------------------------------------

LM_HINT = (
    "Embed the tokens, run each layer from h = 0 (its states are the next layer's inputs), then apply "
    "classification_head at every position: logits (B, T, vocab_size)."
)


check_language_model_parameters = check(
    parameters,
    "check_language_model_parameters",
    """RNNLanguageModel(V, E, H, L).state_dict() holds embedding, layers.<l>.cell.* and classification_head of the
    course's shapes.

    Always judged.
    """,
    **MODEL,
)


check_language_model_values = check(
    values,
    "check_language_model_values",
    """RNNLanguageModel with the grader's layers and weights gives the logits of the stacked RNN, shape (B, T, V).

    Not judged when the class does not lay out its parameters as the course's, or the numbers loaded do not decide what
    it computes (the parameters check charges both).
    """,
    **MODEL,
    hint=LM_HINT,
    extra=("L",),
)


check_language_model_causality = check(
    causality,
    "check_language_model_causality",
    """Changing token j changes no logits at positions before j.

    Not judged when no change of a token moves any later logit on any example (nothing to observe), or the result does
    not have the form the exercise asks for, or the numbers the grader loads do not decide what it computes (the
    parameters check charges that).
    """,
    **MODEL,
    change=change_token,
)


check_language_model_batch_equivariance = check(
    batch_equivariance,
    "check_language_model_batch_equivariance",
    """Reordering the sequences of the batch reorders the logits the same way.

    Not judged when the result does not have the form the exercise asks for (the values or shape check charges that), or
    the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """,
    **MODEL,
)


check_language_model_gradients = check(
    gradients,
    "check_language_model_gradients",
    """RNNLanguageModel's parameter gradients agree with finite differences of the student's own module.

    Not judged when its result does not have the form the exercise asks for, or the numbers the grader loads do not
    decide what it computes (the parameters check charges that).
    """,
    **MODEL,
    wrt=[],
)


check_language_model_dtypes = check(
    dtypes,
    "check_language_model_dtypes",
    """RNNLanguageModel computes in float32 as built and in float64 after .double().

    Not judged when the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """,
    **MODEL,
)
