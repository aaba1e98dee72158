"""Adds the mask after the softmax (rows no longer sum to 1, NaN/-inf appear)."""

REPLACE = {
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    Q, K, V = X @ Wq, X @ Wk, X @ Wv\n    weights = torch.softmax(Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5, dim=-1)\n    weights = weights * (causal_mask(X.shape[-2]) == 0).to(weights.dtype)\n    return weights @ V',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'masked_self_attention': ['check_masked_self_attention_values', 'check_masked_self_attention_causality'],
}
