"""Uses K.T, which is right for one sequence but not for a batch (B, T, d)."""

REPLACE = {
    'masked_self_attention': "def masked_self_attention(X, Wq, Wk, Wv):\n    Q, K, V = X @ Wq, X @ Wk, X @ Wv\n    s = Q @ K.T / Q.shape[-1] ** 0.5 + causal_mask(X.shape[-2]).to(X.dtype)\n    return torch.softmax(s, dim=-1) @ V",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'masked_self_attention': ['check_masked_self_attention_values', 'check_masked_self_attention_single_sequence', 'check_masked_self_attention_causality', 'check_masked_self_attention_gradients', 'check_masked_self_attention_half_precision'],
}
