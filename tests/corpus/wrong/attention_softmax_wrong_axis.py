"""Takes the softmax over the queries (dim=-2) instead of the keys."""

REPLACE = {
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    Q, K, V = X @ Wq, X @ Wk, X @ Wv\n    s = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5 + causal_mask(X.shape[-2]).to(X.dtype)\n    return torch.softmax(s, dim=-2) @ V',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'masked_self_attention': ['check_masked_self_attention_values', 'check_masked_self_attention_causality'],
}
