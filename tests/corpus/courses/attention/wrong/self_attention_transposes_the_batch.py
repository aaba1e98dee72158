"""K.T on a batch reverses every axis, so batched inputs fail."""

REPLACE = {
    'self_attention': """def self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    return torch.softmax(Q @ K.permute(*range(K.ndim - 1, -1, -1)) / math.sqrt(Q.shape[-1]), dim=-1) @ V""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'self_attention': ['check_self_attention_values', 'check_self_attention_single_sequence'],
}
