"""Scales the scores by 1/d instead of 1/sqrt(d)."""

REPLACE = {
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    Q, K, V = X @ Wq, X @ Wk, X @ Wv\n    s = Q @ K.transpose(-2, -1) / Q.shape[-1] + causal_mask(X.shape[-2]).to(X.dtype)\n    return torch.softmax(s, dim=-1) @ V',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'masked_self_attention': ['check_masked_self_attention_values'],
}
