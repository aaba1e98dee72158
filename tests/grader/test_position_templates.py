"""The position templates (grader.checking.positions) on stand-in students run in-process, as
tests/grader/check_table.py runs the course's checks: causality and permutation equivariance (and invariance) each
pass on a right function, fail on a wrong one (a leak; a result that depends on the order), and do not judge a
function that mixes no positions."""

import numpy as np
import torch

from grader.checking.base import run_check
from grader.checking.positions import (
    Causality,
    Part,
    Permutation,
    any_permutation,
    causality,
    changed_positions,
    influence,
    no_mixing_reason,
    over_positions,
    permutation_equivariance,
)
from grader.checking.strategies import gaussian, st
from grader.checking.templates import check
from grader.sandbox.inprocess import InProcess

SMALL = (3, 2, 0)


def cases():
    """Positions N (at least 2), width D and a seed."""
    return st.tuples(st.integers(2, 4), st.integers(1, 3), st.integers(0, 2**16))


def inputs(case) -> list:
    N, D, seed = case
    return [gaussian(seed, N, D)]


def judged(spec_check, body: str):
    """The check's result for ``def f(X): return <body>``."""
    student, reports = InProcess.from_cells([(0, f"import torch\n\ndef f(X):\n    return {body}\n")])
    assert all(r["status"] == "ok" for r in reports), reports
    return run_check(spec_check.__name__, spec_check, 1.0, student)


CAUSAL = check(
    causality,
    "check_f_causality",
    """Changing the input at position j changes no output before j.

    Not judged when no output ever depends on an earlier input.""",
    spec=Causality("f", cases, inputs, lambda case: case[-1], examples=(SMALL,)),
)

EQUIVARIANT = check(
    permutation_equivariance,
    "check_f_permutation_equivariance",
    """Reordering the positions of X reorders the result.

    Not judged when no output position ever changes as another position's input changes.""",
    spec=Permutation(
        "f", cases, inputs, lambda case: case[-1], examples=(SMALL,), **over_positions("f", "positions of X")
    ),
)

INVARIANT = check(
    permutation_equivariance,
    "check_f_order_invariance",
    """Reordering the rows of X leaves the result unchanged.

    Always judged.""",
    spec=Permutation(
        "f",
        cases,
        inputs,
        lambda case: case[-1],
        examples=(SMALL,),
        permutation=any_permutation,
        form=lambda value, args, context: value,
        parts=(Part(axis=None),),
        failure="with the rows reordered as {perm}, {part} changed",
        hint="Sum the rows, in any order.",
    ),
)


def test_causality_passes_on_a_running_sum_and_shows_its_influence():
    result = judged(CAUSAL, "torch.cumsum(X, dim=0)")
    assert result.status == "passed", result.message
    assert result.figure["kind"] == "influence"
    M = np.array(result.figure["matrix"])
    assert (M == np.tril(np.ones_like(M))).all()


def test_causality_fails_on_a_leak_naming_the_first_pair():
    result = judged(CAUSAL, "torch.flip(torch.cumsum(torch.flip(X, [0]), dim=0), [0])")  # sums of the future
    assert result.status == "failed" and result.points == 0
    assert "changing the input at position 1 changed the output at earlier position 0" in result.message
    assert np.array(result.figure["matrix"])[0, 1] == 1


def test_causality_does_not_judge_a_function_that_mixes_no_positions():
    result = judged(CAUSAL, "2 * X")
    assert (result.status, result.kind) == ("failed", "degenerate")
    assert result.message.startswith("not judged: " + no_mixing_reason("f")), result.message


def test_equivariance_passes_on_a_function_of_the_set_of_positions():
    result = judged(EQUIVARIANT, "X - X.mean(dim=0)")
    assert result.status == "passed", result.message


def test_equivariance_fails_on_a_result_that_depends_on_the_order():
    result = judged(EQUIVARIANT, "X - X.mean(dim=0) + torch.arange(X.shape[0], dtype=X.dtype)[:, None]")
    assert result.status == "failed" and result.kind == "values", result.message
    assert "and its positions reordered as [" in result.message
    assert "the result for the reordered positions of X" in result.message


def test_equivariance_does_not_judge_a_function_that_mixes_no_positions():
    result = judged(EQUIVARIANT, "2 * X")
    assert (result.status, result.kind) == ("failed", "degenerate")
    assert result.message == "not judged: " + no_mixing_reason("f")


def test_invariance_fails_with_its_own_words_when_the_order_counts():
    assert judged(INVARIANT, "X.sum(dim=0)").status == "passed"
    result = judged(INVARIANT, "(torch.arange(X.shape[0], dtype=X.dtype)[:, None] * X).sum(dim=0)")
    assert result.status == "failed"
    assert ", the result changed" in result.message and "Hint: Sum the rows, in any order." in result.message


def test_the_influence_matrix_reads_positions_along_any_axis():
    x = gaussian(1, 2, 4, 3)  # positions along axis 1

    def outputs(j):
        moved = x.clone()
        moved[:, j] += 1.0
        return torch.cumsum(moved, dim=1)

    M = influence(outputs, torch.cumsum(x, dim=1), 4, axis=1)
    assert (M == np.tril(np.ones((4, 4), dtype=int))).all()
    base = torch.zeros(3)
    moved = torch.tensor([0.0, float("nan"), 1.0])
    assert changed_positions(moved, base, axis=0).tolist() == [False, False, True]
    assert changed_positions(moved, base, axis=0, nan_moves=True).tolist() == [False, True, True]
