"""Every check fails on a plausible wrong implementation and passes on a correct one of another form.

Student code runs in-process here (the checks see it through the codec exactly as from the sandbox,
stand-ins included), which keeps this table fast; tests/grader/test_sandbox.py covers the sandbox itself.
Each exercise is judged as in a real grade (grader.judge), so stand-ins and gates apply.
"""

from grader.assignments.registry import SEQUENCE_MODELS
from grader.judge import judge_exercise
from grader.sandbox.inprocess import InProcess

from .check_table import CheckTable
from .solutions import SOLUTION

# check name -> (replacement code appended after the solution, words the failure message must contain)
WRONG = {
    "check_seq2col_shapes_and_dtype": (
        """
def seq2col(seq, filter_size):
    seq = np.asarray(seq, dtype=float)
    return np.stack([seq[i:i + filter_size] for i in range(len(seq) - filter_size)]), seq[filter_size:]
""",
        ["dtype"],
    ),
    "check_seq2col_windows": (
        """
def seq2col(seq, filter_size):
    seq = np.asarray(seq)
    X = np.stack([seq[i:i + filter_size] for i in range(len(seq) - filter_size)])
    return X, seq[filter_size - 1:-1]
""",
        ["y:", "expected"],
    ),
    "check_seq2col_leaves_input_unchanged": (
        """
_old = seq2col
def seq2col(seq, filter_size):
    X, y = _old(seq, filter_size)
    if isinstance(seq, np.ndarray):
        seq[:] = 0
    return X, y
""",
        ["changed the array"],
    ),
    "check_seq2col_rejects_bad_filter_size": (
        """
_old = seq2col
def seq2col(seq, filter_size):
    if filter_size == 0:
        return np.zeros((len(seq), 0)), np.asarray(seq)
    return _old(seq, filter_size)
""",
        ["expected a ValueError"],
    ),
    "check_ar_fit_least_squares": (
        """
def ar_fit(seq, filter_size):
    X, y = seq2col(seq, filter_size)
    w, *_ = np.linalg.lstsq(X.astype(float), y.astype(float), rcond=None)
    return np.append(w, 0.0)  # forgot the bias column
""",
        ["squared error"],
    ),
    "check_ar_fit_minimum_norm": (
        """
def ar_fit(seq, filter_size):
    X, y = seq2col(seq, filter_size)
    A = np.hstack([X, np.ones((len(X), 1))]).astype(float)
    w = np.linalg.pinv(A) @ y
    null = np.eye(A.shape[1]) - np.linalg.pinv(A) @ A
    return w + null @ np.ones(A.shape[1])  # another least-squares solution, not the smallest
""",
        ["minimum-norm"],
    ),
    "check_recurrent_unit_values": (
        """
def recurrent_unit(x, h_prev, Wrec, Win):
    return torch.tanh(h_prev @ Wrec.T + x @ Win.T)
""",
        ["values differ"],
    ),
    "check_recurrent_unit_single_example": (
        """
def recurrent_unit(x, h_prev, Wrec, Win):
    return torch.relu(torch.einsum('bh,kh->bk', h_prev, Wrec) + torch.einsum('bi,ki->bk', x, Win))
""",
        ["raised"],
    ),
    "check_recurrent_unit_gradients": (
        """
def recurrent_unit(x, h_prev, Wrec, Win):
    h, x = h_prev.detach().numpy(), x.detach().numpy()
    return torch.from_numpy(np.maximum(h @ Wrec.detach().numpy().T + x @ Win.detach().numpy().T, 0))
""",
        ["not differentiable"],
    ),
    "check_ar_as_recurrent_shapes": (
        """
def ar_as_recurrent(w):
    s = len(w)
    return torch.zeros(s, s + 1), torch.zeros(s), torch.as_tensor(w)
""",
        ["square"],
    ),
    "check_ar_as_recurrent_reproduces_ar_model": (
        """
def ar_as_recurrent(w):
    w = torch.as_tensor(w, dtype=torch.float64)
    s = len(w)
    Wrec = torch.diag(torch.ones(s - 1, dtype=torch.float64), diagonal=1)  # shifts the wrong way
    win = torch.zeros(s, dtype=torch.float64)
    win[0] = 1.0
    return Wrec, win, w.flip(0)
""",
        ["outputs"],
    ),
    "check_forward_composes_recurrent_unit": (
        """
def forward(seqs, Wrec, Win, Wout):
    h = torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)
    for t in range(seqs.shape[1] - 1):  # drops the last step
        h = recurrent_unit(seqs[:, t], h, Wrec, Win)
    return (h @ Wout)[:, 0]
""",
        ["values differ"],
    ),
    "check_forward_gradients": (
        """
def forward(seqs, Wrec, Win, Wout):
    h = torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)
    for t in range(seqs.shape[1]):
        h = recurrent_unit(seqs[:, t], h, Wrec, Win).detach()
    return (h @ Wout)[:, 0]
""",
        ["gradient"],
    ),
    "check_forward_batch_permutation_equivariance": (
        """
def forward(seqs, Wrec, Win, Wout):
    h = torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)
    for t in range(seqs.shape[1]):
        h = recurrent_unit(seqs[:, t], h, Wrec, Win)
    out = (h @ Wout)[:, 0]
    return out + 0.1 * torch.arange(len(out), dtype=out.dtype)  # depends on the position in the batch
""",
        ["perm"],
    ),
    "check_forward_batch_independence": (
        """
def forward(seqs, Wrec, Win, Wout):
    h = torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)
    for t in range(seqs.shape[1]):
        h = recurrent_unit(seqs[:, t], h, Wrec, Win)
        h = h - h.mean(dim=0, keepdim=True)  # mixes the batch
    return (h @ Wout)[:, 0]
""",
        ["sequence 0"],
    ),
    "check_forward_is_vectorized": (
        """
def forward(seqs, Wrec, Win, Wout):
    outs = []
    for b in range(seqs.shape[0]):
        h = torch.zeros(Wrec.shape[0], dtype=seqs.dtype)
        for t in range(seqs.shape[1]):
            h = recurrent_unit(seqs[b, t], h, Wrec, Win)
        outs.append(h @ Wout[:, 0])
    return torch.stack(outs)
""",
        ["once per example per step"],
    ),
    "check_answer_causal_mask_choice": ('CAUSAL_MASK_CHOICE = "A"', ["not the causal mask"]),
    "check_answer_self_attention_is_causal": ("SELF_ATTENTION_IS_CAUSAL = 'False'", ["bool"]),
    "check_answer_qkv_param_count": ("QKV_PARAM_COUNT = 330", ["not right"]),
    "check_causal_mask_shape_and_dtype": (
        """
def causal_mask(T):
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
""",
        ["float tensor"],
    ),
    "check_causal_mask_values": (
        """
def causal_mask(T):
    return torch.triu(torch.full((T, T), float('-inf')), diagonal=0)  # masks the diagonal too
""",
        ["values differ"],
    ),
    "check_masked_self_attention_values": (
        """
def masked_self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.transpose(-2, -1) / Q.shape[-1] + causal_mask(X.shape[-2]).to(X.dtype)  # 1/d, not 1/sqrt(d)
    return torch.softmax(scores, dim=-1) @ V
""",
        ["values differ"],
    ),
    "check_masked_self_attention_single_sequence": (
        """
def masked_self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.transpose(1, 2) / Q.shape[-1] ** 0.5 + causal_mask(X.shape[-2]).to(X.dtype)
    return torch.softmax(scores, dim=-1) @ V
""",
        ["raised"],
    ),
    "check_masked_self_attention_causality": (
        """
def masked_self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    weights = torch.softmax(Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5, dim=-1)
    weights = weights * (causal_mask(X.shape[-2]) == 0)  # mask after the softmax, rows not renormalised...
    return torch.softmax(Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5, dim=-1) @ V  # ...and not even used
""",
        ["earlier position"],
    ),
    "check_masked_self_attention_gradients": (
        """
def masked_self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5 + causal_mask(X.shape[-2]).to(X.dtype)
    return (torch.softmax(scores, dim=-1) @ V).detach()
""",
        ["not differentiable"],
    ),
    "check_masked_self_attention_half_precision": (
        """
def masked_self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5
    future = torch.ones(X.shape[-2], X.shape[-2], dtype=torch.bool).triu(1)
    return torch.softmax(scores.masked_fill(future, -1e9), dim=-1) @ V
""",
        ["raised"],
    ),
    "check_qkv_param_count_matches_torch": (
        """
def qkv_param_count(d_model, seq_len):
    return 3 * d_model * d_model + 3 * d_model  # counts biases that are not there
""",
        ["parameters"],
    ),
    "check_mha_param_count_matches_torch": (
        """
def mha_param_count(d_model, n_heads, bias=True):
    if d_model % n_heads:
        raise ValueError('heads')
    return 3 * d_model * d_model + (3 * d_model if bias else 0)  # forgot the output projection
""",
        ["MultiheadAttention"],
    ),
    "check_mha_param_count_rejects_indivisible_heads": (
        """
def mha_param_count(d_model, n_heads, bias=True):
    return 4 * d_model * d_model + (4 * d_model if bias else 0)
""",
        ["expected a ValueError"],
    ),
}

TABLE = CheckTable(SEQUENCE_MODELS, SOLUTION, WRONG)
ALL_CHECKS = TABLE.checks
judged = TABLE.judged
test_every_check_has_a_wrong_implementation = TABLE.test_every_check_has_a_wrong_implementation
test_check_passes_on_a_correct_solution = TABLE.test_check_passes_on_a_correct_solution
test_check_fails_on_a_wrong_implementation = TABLE.test_check_fails_on_a_wrong_implementation


def _grade_check(source, name):
    return judged(TABLE.student(source), ALL_CHECKS[name][0])[name]


def test_failure_messages_shrink_to_a_small_input():
    result = _grade_check(WRONG["check_seq2col_windows"][0], "check_seq2col_windows")
    # The explicit first example [1, 2, 3, 4, 5] already fails; the message names that call, each of
    # its arguments, and ends with a snippet that makes the same call.
    assert "for seq2col(seq, filter_size)" in result.message
    assert "seq = [1, 2, 3, 4, 5]" in result.message and "filter_size = 2" in result.message
    assert result.message.endswith("seq = [1, 2, 3, 4, 5]\nfilter_size = 2\nseq2col(seq, filter_size)")


def test_a_snippet_of_a_call_graded_with_a_stand_in_says_so_before_the_snippet():
    """forward is graded with the grader's unit, not the student's: rerun in the notebook, the same call
    gives other numbers, and the message must say so (a function without stand-ins says nothing)."""
    forward = _grade_check(WRONG["check_forward_composes_recurrent_unit"][0], "check_forward_composes_recurrent_unit")
    assert forward.status == "failed"
    note = forward.message.split("To reproduce this call in your notebook, run:")[0]
    assert "This call ran with the grader's stand-in for recurrent_unit in place of yours" in note
    assert forward.message.rstrip().endswith("forward(seqs, Wrec, Win, Wout)")
    seq2col = _grade_check(WRONG["check_seq2col_windows"][0], "check_seq2col_windows")
    assert "stand-in" not in seq2col.message


def test_causality_check_reports_an_influence_picture():
    result = _grade_check(WRONG["check_masked_self_attention_causality"][0], "check_masked_self_attention_causality")
    assert result.figure["kind"] == "influence"
    matrix = result.figure["matrix"]
    assert any(matrix[i][j] for i in range(len(matrix)) for j in range(i + 1, len(matrix)))


def test_replayed_examples_give_the_verdicts_hypothesis_gives(monkeypatch):
    """for_all replays the cases drawn once; turning that off must change no status, point or message."""
    import grader.checking.base as base

    def grade_all():
        out = {}
        for name, (source, _) in sorted(WRONG.items()):
            out[name] = _grade_check(source, name)
        student, _ = InProcess.from_cells([(0, SOLUTION)], ("selfcheck",))
        out.update({(e.id, r.name): r for e in SEQUENCE_MODELS.exercises for r in judge_exercise(e, student).checks})
        return out

    replayed = grade_all()
    monkeypatch.setattr(base, "REPLAY", False)
    assert grade_all() == replayed
