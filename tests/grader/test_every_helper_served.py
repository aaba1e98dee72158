"""While one exercise is graded, every other graded function of its assignment is served by the grader
(declared in ``requires`` or not), so a mistake in a helper costs only the helper's own exercise; the
failure message mentions a stand-in only when one was called during that check."""

from grader.assignments.registry import get_assignment
from grader.judge import judge_exercise
from grader.sandbox.inprocess import InProcess

from .test_checks_attention import SOLUTION, corpus

ATTENTION = get_assignment("attention")
FUNCTIONS = [e.id for e in ATTENTION.exercises if e.kind == "function"]

# A block that calls scaled_dot_product_attention itself (not through its declared helpers).
BLOCK_CALLING_SDPA = """
def transformer_block(x, params, n_heads, causal):
    p = params
    N, D = x.shape[-2], x.shape[-1]
    Dh = p["Wq"].shape[1] // n_heads
    mask = torch.ones(N, N, dtype=torch.bool).tril() if causal else None
    a = layer_norm(x, p["ln1_gamma"], p["ln1_beta"])
    heads = [scaled_dot_product_attention(a @ p["Wq"][:, i * Dh:(i + 1) * Dh], a @ p["Wk"][:, i * Dh:(i + 1) * Dh],
                                          a @ p["Wv"][:, i * Dh:(i + 1) * Dh], mask)[0] for i in range(n_heads)]
    h = x + torch.cat(heads, dim=-1) @ p["Wo"]
    z = layer_norm(h, p["ln2_gamma"], p["ln2_beta"])
    return h + torch.relu(z @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]
"""


def _judge(code: str, exercise_id: str, others=FUNCTIONS):
    student, _ = InProcess.from_cells([(0, code)], ATTENTION.modules)
    return judge_exercise(ATTENTION.exercise(exercise_id), student, others=others)


def test_a_wrong_helper_the_exercise_does_not_declare_costs_it_nothing():
    code = SOLUTION + "\n" + corpus("sdpa_no_scale") + "\n" + BLOCK_CALLING_SDPA
    block = _judge(code, "transformer_block")
    assert block.score == block.max_score, [(c.name, c.message[:200]) for c in block.checks if c.status != "passed"]
    # without the undeclared stand-in (as before), the student's own unscaled sdpa cost the block its values
    before = _judge(code, "transformer_block", others=())
    assert before.score < before.max_score
    # and the helper itself is still charged, in its own exercise
    assert (
        _judge(code, "scaled_dot_product_attention").score < ATTENTION.exercise("scaled_dot_product_attention").points
    )


def test_the_stand_in_note_names_only_the_stand_ins_called_in_that_check():
    wrong_norm = (
        SOLUTION
        + """
def rms_norm(x, gamma, eps=1e-5):
    return x / torch.sqrt((x ** 2).mean(dim=-1, keepdim=True) + eps) * gamma * 1.5
"""
    )
    result = _judge(wrong_norm, "rms_norm")
    failed = [c for c in result.checks if c.status != "passed"]
    assert failed, "a wrong rms_norm must fail a check"
    # rms_norm calls no other graded function: no note about stand-ins
    assert not any("stand-in" in c.message for c in failed), failed[0].message
    # a block whose own arithmetic is wrong: its failure names the stand-ins it called, and only those
    wrong_block = SOLUTION + BLOCK_CALLING_SDPA.replace('@ p["W2"] + p["b2"]', '@ p["W2"] * 2 + p["b2"]')
    block = _judge(wrong_block, "transformer_block")
    notes = [c.message for c in block.checks if "stand-in" in c.message]
    assert notes, [c.message[:300] for c in block.checks]
    assert all(
        "scaled_dot_product_attention" in n and "layer_norm" in n and "multi_head_attention" not in n for n in notes
    ), notes[0]
