"""Every check of the attention assignment fails on a plausible wrong implementation and passes on the solution.

Student code runs in-process (the checks see it through the codec, stand-ins included); each exercise is
judged as in a real grade (grader.judge). Most wrong implementations are the assignment's corpus entries
(tests/corpus/courses/attention/wrong), applied on top of the solution notebook's cells.
"""

import re
from pathlib import Path

import nbformat

from grader.assignments.registry import get_assignment
from grader.course.release import ASSIGNMENTS_ROOT
from grader.judge import judge_exercise
from grader.notebook import grade_id, is_solution

from .check_table import CheckTable

ATTENTION = get_assignment("attention")
CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "courses" / "attention" / "wrong"
_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


def _solution_source() -> str:
    nb = nbformat.read(ASSIGNMENTS_ROOT / "source" / "attention" / "attention.ipynb", as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and (grade_id(c) == "imports" or is_solution(c))]
    return "\n\n".join(_MARKER.sub("", s) for s in cells)


SOLUTION = _solution_source()


def corpus(name: str) -> str:
    ns: dict = {}
    exec((CORPUS / f"{name}.py").read_text(), ns)
    return "\n\n".join(ns["REPLACE"].values())


# check name -> (replacement code appended after the solution, words the failure message must contain)
WRONG = {
    "check_sdpa_returns_output_and_weights": (
        """
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0) @ V  # forgets A
""",
        ["pair (Y, A)"],
    ),
    "check_sdpa_values": (corpus("sdpa_no_scale"), ["values differ", "sqrt(dk)"]),
    "check_sdpa_weights_are_distributions": (corpus("sdpa_mask_after_softmax"), ["row sums"]),
    "check_sdpa_fully_masked_row": (corpus("sdpa_nan_for_empty_rows"), ["NaN"]),
    "check_sdpa_query_permutation_equivariance": (
        """
_sdpa = scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    Y, A = _sdpa(Q, K, V, mask)
    return Y + 0.1 * torch.arange(Y.shape[-2], dtype=Y.dtype)[:, None], A  # depends on the query's row
""",
        ["reordered queries"],
    ),
    "check_sdpa_key_value_permutation_invariance": (
        """
_sdpa = scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    Y, A = _sdpa(Q, K, V, mask)
    return Y + 0.1 * V[..., :1, :], A  # the first value is privileged
""",
        ["reordered keys and values"],
    ),
    "check_sdpa_gradients": (corpus("sdpa_weights_detached"), ["gradients"]),
    "check_self_attention_values": (corpus("self_attention_scaled_by_model_width"), ["values differ", "sqrt(dk)"]),
    "check_self_attention_permutation_equivariance": (corpus("self_attention_adds_positions"), ["reordered"]),
    "check_self_attention_single_sequence": (corpus("self_attention_transposes_the_batch"), ["raised"]),
    "check_sinusoidal_positions_shape_and_dtype": (corpus("positions_float64"), ["default dtype"]),
    "check_sinusoidal_positions_values": (corpus("positions_sin_cos_swapped"), ["values differ", "swapped"]),
    "check_answer_equivariant_with_positions": (corpus("answer_positions_still_equivariant"), ["not right"]),
    "check_mha_values": (corpus("mha_heads_split_in_wrong_order"), ["values differ", "columns"]),
    "check_mha_causality": (corpus("mha_mask_inverted"), ["earlier position"]),
    "check_mha_permutation_equivariance": (corpus("mha_heads_not_concatenated_in_order"), ["reordered"]),
    "check_mha_rejects_indivisible_heads": (corpus("mha_no_divisibility_check"), ["expected a ValueError"]),
    "check_answer_swap_poll_output": (corpus("answer_swap_weights_stay_with_positions"), ["not right"]),
    "check_layer_norm_values": (corpus("layer_norm_unbiased_variance"), ["values differ", "biased variance"]),
    "check_layer_norm_gradients": (corpus("layer_norm_through_numpy"), ["not differentiable"]),
    "check_rms_norm_values": (corpus("rms_norm_subtracts_mean"), ["values differ", "mean"]),
    "check_rms_norm_gradients": (
        """
def rms_norm(x, gamma, eps=1e-5):
    return (x / torch.sqrt((x ** 2).mean(dim=-1, keepdim=True) + eps)).detach() * gamma
""",
        ["gradient"],
    ),
    "check_swiglu_values": (corpus("swiglu_silu_on_the_gate"), ["values differ", "silu"]),
    "check_swiglu_gradients": (
        """
def swiglu(x, W1, W2, W3):
    a = (x @ W1).detach()
    return (a * torch.sigmoid(a) * (x @ W2)) @ W3
""",
        ["gradient"],
    ),
    "check_transformer_block_values": (corpus("block_post_norm"), ["values differ", "post-norm"]),
    "check_transformer_block_causality": (corpus("block_ignores_causal"), ["earlier position"]),
    "check_transformer_block_permutation_equivariance": (
        """
_block = transformer_block
def transformer_block(x, params, n_heads, causal):
    return _block(x + sinusoidal_positions(x.shape[-2], x.shape[-1]).to(x.dtype), params, n_heads, causal)
""",
        ["reordered"],
    ),
    "check_attention_weights_bytes_values": (corpus("weights_bytes_forgets_heads"), ["bytes"]),
    "check_block_param_count_matches_torch": (corpus("block_count_forgets_norms"), ["parameters"]),
}


TABLE = CheckTable(ATTENTION, SOLUTION, WRONG)
judged = TABLE.judged
_student = TABLE.student
test_every_check_has_a_wrong_implementation = TABLE.test_every_check_has_a_wrong_implementation
test_check_passes_on_a_correct_solution = TABLE.test_check_passes_on_a_correct_solution
test_check_fails_on_a_wrong_implementation = TABLE.test_check_fails_on_a_wrong_implementation


def test_points_total_and_helpers_come_first():
    assert ATTENTION.max_score == 40
    assert ATTENTION.exercise("transformer_block").requires == ("layer_norm", "multi_head_attention")


def test_transformer_block_is_graded_with_the_reference_helpers():
    """A wrong layer_norm (unbiased variance) in the notebook costs layer_norm, not transformer_block."""
    student = _student(corpus("layer_norm_unbiased_variance"))
    assert judged(student, "layer_norm")["check_layer_norm_values"].status == "failed"
    block = judge_exercise(ATTENTION.exercise("transformer_block"), student)
    assert block.score == ATTENTION.exercise("transformer_block").points, [c.message for c in block.checks]


def test_multi_head_attention_is_graded_with_the_reference_attention():
    """A scaled_dot_product_attention that forgets the scale costs only its own exercise."""
    student = _student(corpus("sdpa_no_scale"))
    assert judged(student, "scaled_dot_product_attention")["check_sdpa_values"].status == "failed"
    for exercise_id in ("self_attention", "multi_head_attention"):
        result = judge_exercise(ATTENTION.exercise(exercise_id), student)
        assert result.score == ATTENTION.exercise(exercise_id).points, [c.message for c in result.checks]


def test_causality_pays_nothing_for_attention_that_mixes_no_positions():
    student = _student("""
def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    if X.shape[-1] % n_heads:
        raise ValueError("heads")
    gate = ((X @ Wq) * (X @ Wk)).sum(-1, keepdim=True)  # uses every weight, one position at a time
    if mask is not None:
        gate = gate * mask.diagonal().to(X.dtype)[:, None]  # and the mask: each position's own entry
    return (gate * (X @ Wv)) @ Wo  # every position on its own: trivially causal and equivariant
""")
    result = judged(student, "multi_head_attention")
    for name in ("check_mha_causality", "check_mha_permutation_equivariance"):
        assert result[name].points == 0 and "does not mix positions" in result[name].message, result[name].message
