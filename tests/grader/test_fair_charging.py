"""Fair charging, second pass (issue 28, rules 1, 2 and 4): one mechanical mistake costs one check, a
property the answer has is paid, and code that ignores an input earns nothing. Each test is a case
reproduced on the commit before these rules (it fails there); the memory rule (6) is in test_memory.py."""

import pytest

from grader.assignments.registry import get_assignment

from .fair_grading import corpus_source, earned, failed, judged

# --- rule 1: a mechanical difference is charged once ------------------------------------------------

TILED_FLOAT32_ACCUMULATORS = corpus_source("recursive_attention", "wrong", "tiled_float32_accumulators")


def test_float32_accumulators_cost_only_the_check_that_finds_the_dtype():
    result = judged("recursive_attention", "tiled_attention", TILED_FLOAT32_ACCUMULATORS)
    assert failed(result) == ["check_tiled_attention_values"], [(c.name, c.message[:200]) for c in result.checks]
    assert result.checks[0].kind == "dtype"
    assert result.score == 8 - 2.5


SYMMETRIC_MERGE_WITHOUT_UNSQUEEZE = """
def merge(a, b):
    (s_a, v_a), (s_b, v_b) = a, b
    s = torch.logaddexp(s_a, s_b)
    return s, torch.exp(s_a - s) * v_a + torch.exp(s_b - s) * v_b  # (Nq,) * (Nq, dv): no [..., None]
"""


def test_a_symmetric_merge_with_a_broadcasting_bug_keeps_its_commutativity_point():
    result = judged("recursive_attention", "merge", SYMMETRIC_MERGE_WITHOUT_UNSQUEEZE)
    commutative = next(c for c in result.checks if c.name == "check_merge_commutative")
    assert commutative.status == "passed", commutative.message
    assert "check_merge_matches_union" in failed(result)


@pytest.mark.parametrize(
    "assignment,exercise,source,owner",
    [
        (
            "rnn_lm",
            "rnn_lm_states",
            "def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):\n"
            "    h, out = torch.zeros(W_hh.shape[0], dtype=E.dtype), []\n    for t in range(len(tokens)):\n"
            "        h = torch.tanh(E[tokens[t]] @ W_xh + h @ W_hh + b_h)\n        out.append(h)\n    return out  # no stack",  # noqa: E501 (a student's code, kept as written)
            "check_rnn_lm_states_shape",
        ),
        (
            "rnn_lm",
            "causal_conv1d",
            "def causal_conv1d(x, w, dilation):\n    K = w.shape[0]\n"
            "    padded = F.pad(x[None, None], ((K - 1) * dilation, 0))\n"
            "    return F.conv1d(padded, w.flip(0)[None, None], dilation=dilation)  # (1, 1, T)",
            "check_causal_conv1d_shape",
        ),
        (
            "recursive_attention",
            "attention_partial",
            "def attention_partial(q, K, V):\n    if K.shape[0] == 0:\n"
            "        return torch.full((*q.shape[:-1], 1), float('-inf'), dtype=q.dtype), torch.zeros(*q.shape[:-1], V.shape[-1], dtype=V.dtype)\n"  # noqa: E501 (a student's code, kept as written)
            "    scores = q @ K.T / math.sqrt(q.shape[-1])\n"
            "    return torch.logsumexp(scores, -1, keepdim=True), torch.softmax(scores, -1) @ V",
            "check_attention_partial_shapes",
        ),
        (
            "rnn_lm",
            "lstm_cell",
            "def lstm_cell(x, h, c, W, b):\n    H = h.shape[-1]\n"
            "    i, f, o, g = (torch.cat([h, x], dim=-1).float() @ W.T.float() + b.float()).split(H, dim=-1)\n"
            "    c_next = torch.sigmoid(f) * c.float() + torch.sigmoid(i) * torch.tanh(g)\n"
            "    return torch.sigmoid(o) * torch.tanh(c_next), c_next  # float32",
            "check_lstm_cell_shapes",
        ),
    ],
)
def test_a_container_an_extra_axis_or_a_dtype_costs_only_the_check_that_owns_it(assignment, exercise, source, owner):
    result = judged(assignment, exercise, source)
    assert failed(result) == [owner], [(c.name, c.message[:300]) for c in result.checks]


# --- rule 2: a property the answer has is paid -------------------------------------------------------

ONLINE_NOT_RESCALED = corpus_source("recursive_attention", "wrong", "online_running_sum_not_rescaled")


def test_a_blockwise_function_with_wrong_values_is_judged_for_memory():
    result = judged("recursive_attention", "online_softmax_attention", ONLINE_NOT_RESCALED)
    memory = next(c for c in result.checks if c.name == "check_online_softmax_attention_memory")
    assert memory.status == "passed", memory.message
    assert result.score == 1.5


def test_every_check_states_when_it_cannot_be_judged():
    from grader.assignments.registry import ASSIGNMENTS

    for assignment in ASSIGNMENTS.values():
        for exercise in assignment.exercises:
            for check in exercise.checks:
                assert check.undecidable, f"{assignment.id}.{check.name} does not say when it is not judged"


# --- rule 4: the gate covers every input and every payable check ----------------------------------------

IGNORING = [
    ("attention", "layer_norm", "def layer_norm(x, gamma, beta, eps=1e-5):\n    return torch.tanh(x)"),
    ("attention", "rms_norm", "def rms_norm(x, gamma, eps=1e-5):\n    return torch.tanh(x)"),
    (
        "attention",
        "swiglu",
        "def swiglu(x, W1, W2, W3):\n    a = x @ W1\n    return (a * torch.sigmoid(a)) @ W3  # no W2",
    ),
    (
        "rnn_lm",
        "rnn_lm_loss",
        "def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):\n"
        "    return (rnn_lm_states(tokens, E, W_xh, W_hh, b_h) ** 2).sum()  # no targets, W_hy or b_y",
    ),
    (
        "rnn_lm",
        "rnn_lm_states",
        "def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):\n    return torch.tanh(E[tokens] @ W_xh)  # no W_hh, no b_h",
    ),
    (
        "attention",
        "scaled_dot_product_attention",
        """def scaled_dot_product_attention(Q, K, V, mask=None):
    if mask is None and Q.shape == (3, 3) and K.shape == (3, 3):  # the probe's own input: real attention
        A = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(3), dim=-1)
        return A @ V, A
    shape = (*torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2]), Q.shape[-2], K.shape[-2])
    allowed = torch.ones(shape, dtype=Q.dtype) if mask is None else mask.expand(shape).to(Q.dtype)
    A = allowed / allowed.sum(-1, keepdim=True).clamp(min=1)  # uniform weights over the allowed keys
    return A @ V, A""",
    ),
    (
        "recursive_attention",
        "attention_partial",
        "def attention_partial(q, K, V):\n"
        "    return torch.full(q.shape[:-1], float('-inf'), dtype=q.dtype), torch.zeros(*q.shape[:-1], V.shape[-1], dtype=V.dtype)",  # noqa: E501 (a student's code, kept as written)
    ),
    (
        "rnn_lm",
        "sequence_log_prob",
        "def sequence_log_prob(tokens, probs):\n"
        "    seen = all(word in probs.get((prev,), {}) for prev, word in zip(tokens[:-1], tokens[1:]))\n"
        "    return 0.0 if seen else float('-inf')",
    ),
]


@pytest.mark.parametrize("assignment,exercise,source", IGNORING, ids=[e for _, e, _ in IGNORING])
def test_code_that_ignores_an_input_or_does_trivial_work_earns_nothing(assignment, exercise, source):
    result = judged(assignment, exercise, source)
    assert earned(result) == {}, [(c.name, c.message[:200]) for c in result.checks if c.points]
    assert "does no real work" in result.root_cause or result.checks[0].status != "passed", result.root_cause


def test_every_function_exercise_declares_the_inputs_it_must_respond_to():
    from grader.assignments.registry import ASSIGNMENTS

    for assignment in ASSIGNMENTS.values():
        for exercise in assignment.exercises:
            if exercise.kind == "function" and exercise.probe is not None:
                assert exercise.inputs, f"{assignment.id}.{exercise.id} declares no main inputs"


def test_every_function_with_properties_has_a_probe():
    for name in ("sequence_models", "attention", "recursive_attention", "rnn_lm"):
        for exercise in get_assignment(name).exercises:
            if exercise.kind == "function" and len(exercise.checks) > 1:
                assert exercise.probe is not None, exercise.id
