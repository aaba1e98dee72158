"""Fair charging, third pass (issue 36, items 2 and 3; issue 35, item 3): precision is one mechanical cause for
functions and classes alike, charged once, with every other check judged at that precision; float token ids are
charged once, like int32 ones; objects are observed: the layout point needs parameters the grader's numbers reach,
and a module that computes with tensors its state_dict() does not hold is charged once, by the parameters check.
Each case was reproduced on the commit before these rules (the tests fail there); in-process, and through the
sandbox for what the object protocol carries."""

import json

import pytest
import torch

from grader.checking.base import CheckFailed
from grader.checking.compare import PRECISION, compare_arrays

from ..corpus.courses import replaced
from .fair_grading import corpus_source, earned, failed, judged, solution_notebook

LM, RA = "lm_modules", "recursive_attention"


def source(assignment: str, entry: str) -> str:
    return corpus_source(assignment, "wrong", entry)


def messages(result) -> list[str]:
    return [result.root_cause] + [c.message for c in result.checks]


# --- precision: one charge, every other check judged at float32's precision ------------------------------------


def test_a_correct_cell_ending_in_float_loses_only_its_dtypes_check():
    result = judged(LM, "RecurrentCell", source(LM, "cell_ends_in_float"))
    assert failed(result) == ["check_recurrent_cell_dtypes"], [(c.name, c.message[:200]) for c in result.checks]
    assert result.score == 6.5  # was 1 of 7: values, gradients, batch and statelessness charged the float32 state too
    dtypes = result.checks[-2]
    assert dtypes.kind == "precision" and "float32" in dtypes.message, dtypes.message


def test_a_cell_computing_on_float32_copies_fails_its_dtypes_check_and_keeps_its_gradients():
    result = judged(LM, "RecurrentCell", source(LM, "cell_computes_on_float32_copies"))
    assert failed(result) == ["check_recurrent_cell_dtypes"], [(c.name, c.message[:200]) for c in result.checks]
    assert "float32's digits" in result.checks[-2].message  # the dtypes check sees them; it used to pass


def test_a_zero_state_of_the_default_dtype_costs_the_dtypes_check_alone_with_no_nested_not_judged():
    result = judged(LM, "RNNLanguageModel", source(LM, "lm_zero_state_default_dtype"))
    assert failed(result) == ["check_language_model_dtypes"], [(c.name, c.message[:200]) for c in result.checks]
    assert result.score == 8.5  # was 7.5: gradients "not judged: not judged: ..." as float32 only
    assert result.checks[-1].kind == "precision" and "after .double()" in result.checks[-1].message
    assert not any("not judged: not judged" in m for m in messages(result)), messages(result)


@pytest.mark.parametrize(
    "exercise,entry,shape_check,score",
    [
        ("sample_next", "sample_float_ids", "check_sample_next_shape", 6.5),
        ("generate", "generate_float_ids", "check_generate_shape_and_prefix", 5.5),
    ],
)
def test_float_token_ids_are_charged_once_like_int32_ones(exercise, entry, shape_check, score):
    result = judged(LM, exercise, source(LM, entry))
    assert failed(result) == [shape_check], [(c.name, c.message[:200]) for c in result.checks]
    assert result.score == score  # was 0: every check refused float ids
    int32 = judged(LM, exercise, source(LM, entry).replace(".double()", ".int()"))
    assert int32.score == score


def test_a_float32_running_state_in_a_float64_result_costs_one_precision_check():
    result = judged(RA, "tiled_attention", source(RA, "tiled_float32_state_float64_result"))
    assert failed(result) == ["check_tiled_attention_values"], [(c.name, c.message[:200]) for c in result.checks]
    assert result.checks[0].kind == "precision" and "float32's precision" in result.checks[0].message
    assert result.score == 8 - 2.5  # was 3: causal values "not judged" and key/value permutation charged it again


def test_a_wrong_formula_is_not_taken_for_a_precision_slip():
    result = judged(RA, "tiled_attention", source(RA, "tiled_scale_by_d"))
    values = result.checks[0]
    assert values.status == "failed" and values.kind == "values", (values.kind, values.message[:200])


def _close(got, want):
    def compare():
        mismatch = compare_arrays(got, want, rtol=1e-6, atol=1e-9)
        if mismatch is not None:
            raise CheckFailed(str(mismatch), kind=mismatch.kind)

    return compare


def test_slips_keep_float32_rounding_and_raise_anything_coarser():
    from grader.checking.mechanical import Slips

    exact = torch.linspace(-2, 2, 9, dtype=torch.float64)
    rounded = exact * (1 + 3e-6)  # beyond float64's tolerance (1e-6), within a few float32 roundings (64 eps = 7.6e-6)
    slips = Slips()
    slips.judge(_close(rounded, exact), torch.float64)  # kept, not raised
    with pytest.raises(CheckFailed) as charged:
        slips.charge()
    assert charged.value.kind == "precision"
    with pytest.raises(CheckFailed) as wrong:  # an error far beyond float32's rounding is a wrong value
        Slips().judge(_close(exact * (1 + 1e-4), exact), torch.float64)
    assert wrong.value.kind == "values"
    with pytest.raises(CheckFailed):  # float32 inputs: nothing coarser to excuse
        Slips().judge(_close(rounded.float() * (1 + 1e-5), exact.float()), torch.float32)
    Slips().charge()  # nothing kept: nothing charged
    assert PRECISION.get() is None


def test_a_result_shows_the_precision_it_was_computed_in():
    from grader.checking.mechanical import coarser_result, float32_digits

    x = torch.randn(4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    assert coarser_result(x.float(), torch.float64) == torch.float32
    assert float32_digits(x.float().double()) and coarser_result(x.float().double(), torch.float64) == torch.float32
    assert not float32_digits(x) and coarser_result(x, torch.float64) is None
    assert not float32_digits(torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64))  # whole numbers say nothing


# --- objects are observed --------------------------------------------------------------------------------------


def test_a_forged_parameter_listing_earns_no_more_than_the_honest_one():
    forged = judged(LM, "RecurrentCell", source(LM, "cell_forged_state_dict"))
    honest = judged(LM, "RecurrentCell", source(LM, "cell_one_linear_over_concat"))
    assert forged.score == honest.score == 3.0, (forged.score, honest.score)  # the forged listing got 4 of 7
    parameters = forged.checks[0]
    assert parameters.status == "failed" and "load_state_dict() does not reach" in parameters.message


def test_layers_in_a_plain_list_are_charged_once_by_the_parameters_check():
    results = [judged(LM, "RNNLanguageModel", source(LM, "lm_plain_list_of_layers")) for _ in range(2)]
    result = results[0]
    assert failed(result) == [
        "check_language_model_parameters",
        "check_language_model_values",
        "check_language_model_dtypes",
    ], [(c.name, c.message[:200]) for c in result.checks]
    parameters = result.checks[0]
    assert "state_dict() does not hold" in parameters.message and "nn.ModuleList" in parameters.message
    assert [c.kind for c in result.checks if c.status != "passed"][1:] == ["not_judged", "not_judged"]
    # causal and batch-equivariant it is: no message calls it otherwise (it lost 1.5 + 1 as "acausal", "row-mixing")
    assert set(earned(result)) == {
        "check_language_model_causality",
        "check_language_model_batch_equivariance",
        "check_language_model_gradients",
    }
    assert results[0] == results[1]  # the layers' own numbers come from the grader's seed: the same grade each run


@pytest.fixture(scope="module")
def objects_notebook(tmp_path_factory):
    """The lm_modules solution with a forged cell listing, layers in a plain list and float ids from sample_next."""
    nb = replaced(
        solution_notebook(LM),
        {
            "RecurrentCell": source(LM, "cell_forged_state_dict"),
            "RNNLanguageModel": source(LM, "lm_plain_list_of_layers"),
            "sample_next": source(LM, "sample_float_ids"),
        },
    )
    path = tmp_path_factory.mktemp("objects") / "objects.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_through_the_sandbox_objects_are_observed_and_float_ids_charged_once(sandbox_grader, objects_notebook):
    graded = [sandbox_grader.grade(objects_notebook, LM) for _ in range(2)]
    result = graded[0]
    scores = {e.id: e.score for e in result.exercises}
    assert scores["RecurrentCell"] == 3.0 and scores["RNNLanguageModel"] == 3.5 and scores["sample_next"] == 6.5, scores
    assert scores["RNNLayer"] == 7.0 and scores["generate"] == 6.0, scores  # the stand-ins keep the others whole
    assert graded[0].to_dict()["exercises"] == graded[1].to_dict()["exercises"]
