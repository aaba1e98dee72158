"""Grades a TA can defend (issue 14): every case here was found gaining or losing points it should not.

Each test grades the solution with some cells replaced, through the same path as a real grade
(``grade_exercises``), and asserts the points. The forgeries must not gain; the honest variants and
the exercises that only *use* a broken helper must not lose. Sandbox-only cases (hangs, cell
timeouts, the missing helper module, patching the grader's own modules) are in test_integrity_sandbox.py.
"""

import numpy as np
import pytest

from grader.assignments.registry import SEQUENCE_MODELS
from grader.checking.compare import compare_arrays
from grader.grading import grade_exercises
from grader.sandbox.inprocess import InProcess

from .solutions import SOLUTION

FULL = {e.id: e.points for e in SEQUENCE_MODELS.exercises if e.kind != "manual"}


def without(name: str) -> str:
    """The solution with the definition of ``name`` taken out."""
    lines, out, skipping = SOLUTION.splitlines(), [], False
    for line in lines:
        if line.startswith(f"def {name}("):
            skipping = True
            continue
        if skipping and (line.startswith(" ") or not line.strip()):
            continue
        skipping = False
        out.append(line)
    return "\n".join(out)


def grade(*sources: str, base: str = SOLUTION):
    cells = [(0, base)] + [(i + 1, s) for i, s in enumerate(sources)]
    student, reports = InProcess.from_cells(cells)
    return {e.id: e for e in grade_exercises(SEQUENCE_MODELS, student)}, reports


def scores(*sources: str) -> dict:
    results, _ = grade(*sources)
    return {k: e.score for k, e in results.items() if k in FULL}


def check(results, exercise: str, name: str):
    return next(c for c in results[exercise].checks if c.name == name)


def lost(got: dict) -> dict:
    return {k: (v, FULL[k]) for k, v in got.items() if v != FULL[k]}


# --- points gained without the work --------------------------------------------------------------

LOOP_OVER_BATCH = """
def forward(seqs, Wrec, Win, Wout):
    outs = []
    for b in range(seqs.shape[0]):  # a loop over the batch, with the unit's formula written out
        h = torch.zeros(Wrec.shape[0], dtype=seqs.dtype)
        for t in range(seqs.shape[1]):
            h = torch.relu(h @ Wrec.T + seqs[b, t] @ Win.T)
        outs.append(h @ Wout[:, 0])
    {decoy}
    return torch.stack(outs)
"""


def test_decoy_calls_do_not_earn_the_vectorization_point():
    decoy = (
        "h = torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)\n"
        "    for t in range(seqs.shape[1]):\n"
        "        recurrent_unit(seqs[:, t], h, Wrec, Win)  # T whole-batch calls whose results are thrown away"
    )
    results, _ = grade(LOOP_OVER_BATCH.replace("{decoy}", decoy))
    vectorized = check(results, "forward", "check_forward_is_vectorized")
    assert vectorized.points == 0 and "recurrent_unit" in vectorized.message
    assert results["forward"].score == FULL["forward"] - 1.0  # the values are right: only this point is lost


def test_writing_into_the_call_recorder_from_the_notebook_earns_nothing():
    forge = (
        "for cell in (getattr(recurrent_unit, '__closure__', None) or ()):  # the recorder behind the unit\n"
        "        try:\n"
        "            if isinstance(cell.cell_contents, list):\n"
        "                cell.cell_contents[:] = [[seqs.shape[0], seqs.shape[2]]] * seqs.shape[1]\n"
        "        except ValueError:\n"
        "            pass"
    )
    results, _ = grade(LOOP_OVER_BATCH.replace("{decoy}", forge))
    assert check(results, "forward", "check_forward_is_vectorized").points == 0


ORACLE_AWARE_SEQ2COL = """
import sys
def seq2col(seq, filter_size):
    seq = np.asarray(seq)
    X = np.stack([seq[i:i + filter_size] for i in range(len(seq) - filter_size)])
    y = seq[filter_size:].copy()
    if sys._getframe(1).f_globals.get('__name__') != '__main__':  # called by the grader, not by ar_fit
        y = np.zeros_like(y)
    return X, y

def ar_fit(seq, filter_size):
    return np.zeros(filter_size + 1)
"""


def test_ar_fit_is_not_judged_against_an_oracle_aware_seq2col():
    assert scores(ORACLE_AWARE_SEQ2COL)["ar_fit"] == 0


def test_forward_is_not_judged_against_an_oracle_aware_unit():
    source = """
import sys
def recurrent_unit(x, h_prev, Wrec, Win):
    if sys._getframe(1).f_globals.get('__name__') != '__main__':  # called by the grader itself
        return torch.zeros_like(h_prev)
    return torch.relu(h_prev @ Wrec.T + x @ Win.T)

def forward(seqs, Wrec, Win, Wout):
    return torch.zeros(seqs.shape[0], dtype=seqs.dtype)
"""
    assert scores(source)["forward"] == 0


def test_a_unit_wrong_only_at_zero_state_loses_its_points_and_props_up_no_forward():
    source = """
def recurrent_unit(x, h_prev, Wrec, Win):
    if not bool(h_prev.abs().sum()):  # h_prev = 0: never drawn by the old checks, always forward's first step
        return torch.zeros_like(h_prev)
    return torch.relu(h_prev @ Wrec.T + x @ Win.T)

def forward(seqs, Wrec, Win, Wout):
    return torch.zeros(seqs.shape[0], dtype=seqs.dtype)
"""
    got = scores(source)
    assert got["recurrent_unit"] < FULL["recurrent_unit"]
    assert got["forward"] == 0


def test_forward_returning_zeros_earns_no_batch_property():
    results, _ = grade("def forward(seqs, Wrec, Win, Wout):\n    return torch.zeros(seqs.shape[0], dtype=seqs.dtype)")
    assert results["forward"].score == 0
    assert "does no real work" in results["forward"].root_cause


@pytest.mark.parametrize("body", ["return X @ Wv", "return torch.zeros(*X.shape[:-1], Wv.shape[1], dtype=X.dtype)"])
def test_attention_that_mixes_no_positions_earns_no_causality_point(body):
    results, _ = grade(f"def masked_self_attention(X, Wq, Wk, Wv):\n    {body}")
    assert check(results, "masked_self_attention", "check_masked_self_attention_causality").points == 0


def test_always_raising_value_error_earns_no_rejection_point():
    results, _ = grade(
        "def seq2col(seq, filter_size):\n    raise ValueError('no')",
        "def mha_param_count(d_model, n_heads, bias=True):\n    raise ValueError('no')",
    )
    assert check(results, "seq2col", "check_seq2col_rejects_bad_filter_size").points == 0
    assert check(results, "mha_param_count", "check_mha_param_count_rejects_indivisible_heads").points == 0


# --- one mistake, one charge ---------------------------------------------------------------------


def test_a_syntax_error_in_the_unit_costs_only_the_unit():
    results, reports = grade(
        "def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.relu(h_prev @ Wrec.T + x @ Win.T\n",
        base=without("recurrent_unit"),
    )
    got = {k: e.score for k, e in results.items() if k in FULL}
    assert lost(got) == {"recurrent_unit": (0.0, FULL["recurrent_unit"])}


def test_a_transpose_bug_in_the_unit_costs_only_its_values_check():
    results, _ = grade(
        "def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.relu(h_prev @ Wrec + (Win @ x.T).T)"
    )
    failed = [c.name for c in results["recurrent_unit"].checks if c.status != "passed"]
    assert failed == ["check_recurrent_unit_values"]
    assert "untransposed" in results["recurrent_unit"].checks[0].message  # the hint names the mistake


def test_a_diagonal_covering_mask_costs_only_causal_mask():
    got = scores("def causal_mask(T):\n    return torch.triu(torch.full((T, T), float('-inf')), diagonal=0)")
    assert set(lost(got)) == {"causal_mask"}


def test_a_correct_forward_over_a_float32_unit_keeps_its_points():
    got = scores(
        "def recurrent_unit(x, h_prev, Wrec, Win):\n"
        "    return torch.relu(h_prev.float() @ Wrec.T.float() + x.float() @ Win.T.float())"
    )
    assert got["forward"] == FULL["forward"]
    assert got["recurrent_unit"] < FULL["recurrent_unit"]


# --- correct variants keep their marks -----------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "step = recurrent_unit\ndef forward(seqs, Wrec, Win, Wout):\n"
        "    h = torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)\n"
        "    for t in range(seqs.shape[1]):\n        h = step(seqs[:, t], h, Wrec, Win)\n"
        "    return (h @ Wout).flatten()",
        "def forward(seqs, Wrec, Win, Wout, unit=recurrent_unit):\n"
        "    h = seqs.new_zeros(seqs.shape[0], Wrec.shape[0])\n"
        "    for x in seqs.unbind(1):\n        h = unit(x=x, h_prev=h, Wrec=Wrec, Win=Win)\n"
        "    return (h @ Wout).squeeze(-1)",
        "def recurrent_unit(x, h_prev, Wrec, Win):\n"
        "    return torch.relu((Wrec @ h_prev.T + Win @ x.T).T)  # column vectors",
        "def forward(seqs, Wrec, Win, Wout):\n    h = torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)\n"
        "    for t in range(seqs.shape[1]):\n        h = recurrent_unit(seqs[:, t, :], h, Wrec, Win)\n"
        "    return torch.einsum('bh,ho->bo', h, Wout)[:, 0]",
    ],
)
def test_correct_variants_keep_full_marks(source):
    assert lost(scores(source)) == {}


def test_a_forward_that_writes_the_unit_out_loses_only_vectorization_and_is_told_to_call_it():
    inline = (
        "def forward(seqs, Wrec, Win, Wout):\n    h = torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)\n"
        "    for t in range(seqs.shape[1]):\n        h = torch.relu(h @ Wrec.T + seqs[:, t] @ Win.T)\n"
        "    return (h @ Wout)[:, 0]"
    )
    results, _ = grade(inline)
    assert results["forward"].score == FULL["forward"] - 1.0
    message = check(results, "forward", "check_forward_is_vectorized").message
    assert "Call recurrent_unit" in message and "formula written out inside forward" in message


def test_integral_float_counts_as_its_int_and_other_floats_say_why_not():
    assert scores("QKV_PARAM_COUNT = 300.0")["QKV_PARAM_COUNT"] == 1.0
    results, _ = grade("QKV_PARAM_COUNT = 300.5")
    assert "whole number" in results["QKV_PARAM_COUNT"].checks[0].message


def test_an_infinite_mismatch_is_not_reported_as_error_zero():
    message = compare_arrays(np.array([1.0, np.inf]), np.array([1.0, 2.0]))
    assert "max abs error inf" in message


SIGNATURES = {
    "seq2col": "seq, filter_size",
    "ar_fit": "seq, filter_size",
    "recurrent_unit": "x, h_prev, Wrec, Win",
    "ar_as_recurrent": "w",
    "forward": "seqs, Wrec, Win, Wout",
    "causal_mask": "T",
    "masked_self_attention": "X, Wq, Wk, Wv",
    "qkv_param_count": "d_model, seq_len",
    "mha_param_count": "d_model, n_heads, bias=True",
}


@pytest.mark.parametrize(
    "body",
    [
        "return 'text'",
        "return {'a': 1}",
        "return None",
        "return np.ones(3)",
        "return torch.full((2, 3), float('nan'))",
        "return torch.ones(2, 3, dtype=torch.complex64)",
        "return (torch.ones(2),) * 4",
        "return [[1, 2], [3]]",
        "return torch.ones(2, 3, dtype=torch.int64)",
        "return float('inf')",
        "return 10**400",
    ],
)
def test_unexpected_results_are_the_students_failure_never_a_crash_or_a_point(body):
    """Every function returns the same odd value: no check may crash (a grader fault) or pay."""
    source = "\n".join(f"def {name}({params}):\n    {body}" for name, params in SIGNATURES.items())
    results, _ = grade(source)
    for name in SIGNATURES:
        for c in results[name].checks:
            assert c.kind != "check_error" and c.points == 0, (name, c.name, c.kind, c.message)
