"""masked_fill with -1e9, which does not fit in float16."""

REPLACE = {
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    Q, K, V = X @ Wq, X @ Wk, X @ Wv\n    s = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5\n    future = torch.ones(X.shape[-2], X.shape[-2], dtype=torch.bool).triu(1)\n    return torch.softmax(s.masked_fill(future, -1e9), dim=-1) @ V',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'masked_self_attention': ['check_masked_self_attention_half_precision'],
}
