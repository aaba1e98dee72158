"""Computes in float32 whatever the inputs' dtype: a mechanical mistake, charged once (to the values check, which compares dtypes)."""

REPLACE = {
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    X, Wq, Wk, Wv = X.float(), Wq.float(), Wk.float(), Wv.float()\n    Q, K, V = X @ Wq, X @ Wk, X @ Wv\n    scores = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5 + causal_mask(X.shape[-2]).float()\n    return torch.softmax(scores, dim=-1) @ V',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'masked_self_attention': ['check_masked_self_attention_values'],
}
