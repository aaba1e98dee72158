"""The lm_modules self-checks say what is wrong and where (issue 36, item 7): a layer that keeps state between calls
is told so (not that it is acausal); an exception raised inside torch is placed at the line of the student's cell
that made the call (not at a line of torch's own files); and a class's self-check judges that class alone: a
wrong or unwritten RecurrentCell fails neither RNNLayer's nor RNNLanguageModel's self-check, a wrong RNNLayer not
RNNLanguageModel's, while the class's own mistakes are still caught (tests/test_selfchecks_lm_modules.py)."""

from __future__ import annotations

import re

import pytest

from .corpus.courses import entries
from .test_selfchecks_lm_modules import _run, folders  # noqa: F401  (the fixture)


def _wrong(name: str) -> dict:
    return next(e.data["REPLACE"] for e in entries("lm_modules", "wrong") if e.name == name)


def test_a_layer_that_keeps_state_between_calls_is_told_so(folders):  # noqa: F811
    got = _run(folders[0], _wrong("layer_keeps_state_on_self"), quick=True)["selfcheck_RNNLayer"]
    assert type(got).__name__ == "SelfCheckFailed"
    assert "keeps state between calls" in str(got) and "changed earlier states" not in str(got), got


FLOAT_INPUT = (
    "class RecurrentCell(nn.Module):\n"
    "    def __init__(self, input_dim, hidden_dim):\n"
    "        super().__init__()\n"
    "        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n"
    "        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)\n"
    "\n"
    "    def forward(self, x, h_prev):\n"
    "        return torch.relu(self.input_to_hidden(x.float()) + self.hidden_to_hidden(h_prev))  # float32 input\n"
)


def test_an_error_raised_inside_torch_is_placed_in_the_students_cell(folders):  # noqa: F811
    got = _run(folders[0], {"RecurrentCell": FLOAT_INPUT}, quick=True)["selfcheck_RecurrentCell"]
    assert type(got).__name__ == "SelfCheckFailed" and "RuntimeError" in str(got), got
    assert re.search(r"\(line (\d+) of your cell\)", str(got)), got
    line = int(re.search(r"\(line (\d+) of your cell\)", str(got)).group(1))
    assert FLOAT_INPUT.splitlines()[line - 1].strip().startswith("return torch.relu(self.input_to_hidden(x.float())"), (
        line
    )


UNWRITTEN_CELL = (
    "class RecurrentCell(nn.Module):\n"
    "    def __init__(self, input_dim, hidden_dim):\n"
    "        super().__init__()\n"
    "        raise NotImplementedError()\n"
    "\n"
    "    def forward(self, x, h_prev):\n"
    "        raise NotImplementedError()\n"
)


@pytest.mark.parametrize(
    "cell",
    ["cell_tanh", "cell_no_hidden_bias", "cell_one_linear_over_concat", "cell_remembers_its_state", "not written yet"],
)
def test_a_wrong_cell_fails_only_the_cells_self_check(cell, folders):  # noqa: F811
    replace = {"RecurrentCell": UNWRITTEN_CELL} if cell == "not written yet" else _wrong(cell)
    got = _run(folders[0], replace, quick=True)
    assert not isinstance(got["selfcheck_RecurrentCell"], str), (cell, got["selfcheck_RecurrentCell"])
    for later in ("selfcheck_RNNLayer", "selfcheck_RNNLanguageModel"):
        assert isinstance(got[later], str) and got[later].startswith("[ok] "), (cell, later, got[later])


@pytest.mark.parametrize("layer", ["layer_runs_backwards", "layer_returns_last_state", "layer_keeps_state_on_self"])
def test_a_wrong_layer_fails_only_the_layers_self_check(layer, folders):  # noqa: F811
    got = _run(folders[0], _wrong(layer), quick=True)
    assert not isinstance(got["selfcheck_RNNLayer"], str), (layer, got["selfcheck_RNNLayer"])
    assert isinstance(got["selfcheck_RNNLanguageModel"], str) and got["selfcheck_RNNLanguageModel"].startswith(
        "[ok] "
    ), (layer, got["selfcheck_RNNLanguageModel"])
