"""The stand-in classes of lm_modules (grader.jail.objects): a class another class builds on, laid out as the
course's class (its constructor's and forward's parameter names, its layers), whose forward the grader answers
with the course's formula and the parameters the student's module holds. RNNLayer is graded with the grader's
RecurrentCell, RNNLanguageModel with the grader's RNNLayer (and its cell); the declarations name them
(``Exercise.stand_in``)."""

from __future__ import annotations

import inspect

from grader.checking.calls import StandInClass
from grader.checking.standins import StandIn
from reference import lm_modules as ref

from .costs import rnn_layer_cost


def _names(fn, skip: int = 0) -> list[str]:
    return list(inspect.signature(fn).parameters)[skip:]


_CELL_SPEC = {
    "init": _names(ref.RecurrentCell),
    "forward": _names(ref.RecurrentCell.forward, 1),
    "linears": [["input_to_hidden", "input_dim", "hidden_dim"], ["hidden_to_hidden", "hidden_dim", "hidden_dim"]],
}
_WEIGHTS = ("W_ih", "b_ih", "W_hh", "b_hh")  # each Linear's weight and bias, in registration order
RECURRENT_CELL = StandInClass(
    "RecurrentCell",
    _CELL_SPEC,
    StandIn("RecurrentCell.forward", (*_CELL_SPEC["forward"], *_WEIGHTS), ref.recurrent_cell_step),
)
_LAYER_FORWARD = _names(ref.RNNLayer.forward, 1)
RNN_LAYER = StandInClass(
    "RNNLayer",
    {
        "init": _names(ref.RNNLayer),
        "forward": _LAYER_FORWARD,
        "children": [["cell", "RecurrentCell", _CELL_SPEC, _names(ref.RecurrentCell)]],
    },
    StandIn("RNNLayer.forward", (*_LAYER_FORWARD, *_WEIGHTS), ref.rnn_layer_states, rnn_layer_cost),
    children=(RECURRENT_CELL,),
)
