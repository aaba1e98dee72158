"""self_attention written out with 1/sqrt(D) instead of 1/sqrt(dk)."""

REPLACE = {
    'self_attention': """def self_attention(X, Wq, Wk, Wv):
    scores = (X @ Wq) @ (X @ Wk).transpose(-2, -1) / math.sqrt(X.shape[-1])
    return torch.softmax(scores, dim=-1) @ (X @ Wv)""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'self_attention': ['check_self_attention_values'],
}
