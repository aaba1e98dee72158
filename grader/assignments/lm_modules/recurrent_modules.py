"""Checks for the lm_modules classes: RecurrentCell, RNNLayer and RNNLanguageModel, each built by the grader
in the student's process (grader.checking.modules). RNNLayer is graded with the grader's RecurrentCell and
RNNLanguageModel with the grader's RNNLayer (stand-in classes, grader.checking.standins), so a wrong cell costs only
the cell's exercise. The properties they share are in grader.assignments.lm_modules.module_properties."""
from __future__ import annotations

from .module_properties import (
    CELL_SMALL,
    LAYER_SMALL,
    LM_SMALL,
    Cell,
    Layer,
    Model,
    batch_equivariance,
    causality,
    cell_dims,
    change_token,
    change_vector,
    dtypes,
    gradients,
    layer_dims,
    lm_dims,
    parameters,
    probe_language_model,
    probe_recurrent_cell,
    probe_rnn_layer,
    stateless,
    values,
)

__all__ = ["probe_recurrent_cell", "probe_rnn_layer", "probe_language_model"]  # the exercises' probes, declared here too

# --- RecurrentCell -------------------------------------------------------------------------------------------

CELL_HINT = "h = relu(input_to_hidden(x) + hidden_to_hidden(h_prev)): both Linear layers, with their biases, then relu."


def check_recurrent_cell_parameters(student):
    """RecurrentCell(D, H).state_dict() holds input_to_hidden and hidden_to_hidden weights and biases of the course's shapes.

    Always judged.
    """
    parameters(student, Cell, cell_dims(), CELL_SMALL)


def check_recurrent_cell_values(student):
    """RecurrentCell with the grader's weights computes relu(input_to_hidden(x) + hidden_to_hidden(h_prev)).

    Not judged when the class does not lay out its parameters as the course's, or the numbers loaded do not decide what it computes (the parameters check charges both).
    """
    values(student, Cell, cell_dims(), CELL_SMALL, CELL_HINT)


def check_recurrent_cell_gradients(student):
    """RecurrentCell's gradients (inputs and parameters) agree with finite differences of the student's own module.

    Not judged when its result does not have the form the exercise asks for, or the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """
    gradients(student, Cell, cell_dims(), CELL_SMALL, [0, 1])


def check_recurrent_cell_batch_equivariance(student):
    """Reordering the batch rows of x and h_prev reorders the rows of RecurrentCell's result the same way.

    Not judged when the result does not have the form the exercise asks for (the values or shape check charges that), or the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """
    batch_equivariance(student, Cell, cell_dims(), CELL_SMALL)


def check_recurrent_cell_dtypes(student):
    """RecurrentCell computes in float32 as built and in float64 after .double().

    Not judged when the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """
    dtypes(student, Cell, cell_dims(), CELL_SMALL)


def check_recurrent_cell_is_stateless(student):
    """RecurrentCell gives the same result for the same inputs whatever was computed before, in train() and eval().

    Not judged when the result does not have the form the exercise asks for (the values or shape check charges that).
    """
    stateless(student, Cell, cell_dims(), CELL_SMALL)


# --- RNNLayer ----------------------------------------------------------------------------------------------------

LAYER_HINT = "Loop t = 0..T-1: h = self.cell(x_seq[:, t], h); stack every h along dim 1 into (B, T, H)."


def check_rnn_layer_parameters(student):
    """RNNLayer(D, H).state_dict() holds exactly its cell's parameters, named cell.*.

    Always judged.
    """
    parameters(student, Layer, layer_dims(), LAYER_SMALL)


def check_rnn_layer_values(student):
    """RNNLayer with the grader's cell and weights returns every state h_1..h_T of the recurrence, shape (B, T, H).

    Not judged when the class does not lay out its parameters as the course's, or the numbers loaded do not decide what it computes (the parameters check charges both).
    """
    values(student, Layer, layer_dims(), LAYER_SMALL, LAYER_HINT)


def check_rnn_layer_causality(student):
    """RNNLayer's state at time t does not depend on inputs after t.

    Not judged when no change of an input moves any later output on any example (nothing to observe), or the result does not have the form the exercise asks for, or the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """
    causality(student, Layer, layer_dims(), LAYER_SMALL, change_vector)


def check_rnn_layer_gradients(student):
    """RNNLayer's gradients (inputs and parameters) agree with finite differences of the student's own module.

    Not judged when its result does not have the form the exercise asks for, or the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """
    gradients(student, Layer, layer_dims(), LAYER_SMALL, [0, 1])


def check_rnn_layer_is_stateless(student):
    """RNNLayer gives the same result for the same inputs whatever was computed before, in train() and eval().

    Not judged when the result does not have the form the exercise asks for (the values or shape check charges that).
    """
    stateless(student, Layer, layer_dims(), LAYER_SMALL)


# --- RNNLanguageModel -----------------------------------------------------------------------------------------------

LM_HINT = ("Embed the tokens, run each layer from h = 0 (its states are the next layer's inputs), then apply "
           "classification_head at every position: logits (B, T, vocab_size).")


def check_language_model_parameters(student):
    """RNNLanguageModel(V, E, H, L).state_dict() holds embedding, layers.<l>.cell.* and classification_head of the course's shapes.

    Always judged.
    """
    parameters(student, Model, lm_dims(), LM_SMALL)


def check_language_model_values(student):
    """RNNLanguageModel with the grader's layers and weights gives the logits of the stacked RNN, shape (B, T, V).

    Not judged when the class does not lay out its parameters as the course's, or the numbers loaded do not decide what it computes (the parameters check charges both).
    """
    values(student, Model, lm_dims(), LM_SMALL, LM_HINT, extra=("L",))


def check_language_model_causality(student):
    """Changing token j changes no logits at positions before j.

    Not judged when no change of a token moves any later logit on any example (nothing to observe), or the result does not have the form the exercise asks for, or the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """
    causality(student, Model, lm_dims(), LM_SMALL, change_token)


def check_language_model_batch_equivariance(student):
    """Reordering the sequences of the batch reorders the logits the same way.

    Not judged when the result does not have the form the exercise asks for (the values or shape check charges that), or the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """
    batch_equivariance(student, Model, lm_dims(), LM_SMALL)


def check_language_model_gradients(student):
    """RNNLanguageModel's parameter gradients agree with finite differences of the student's own module.

    Not judged when its result does not have the form the exercise asks for, or the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """
    gradients(student, Model, lm_dims(), LM_SMALL, [])


def check_language_model_dtypes(student):
    """RNNLanguageModel computes in float32 as built and in float64 after .double().

    Not judged when the numbers the grader loads do not decide what it computes (the parameters check charges that).
    """
    dtypes(student, Model, lm_dims(), LM_SMALL)
