"""Forgets the mask: every position sees the future."""

REPLACE = {
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    Q, K, V = X @ Wq, X @ Wk, X @ Wv\n    return torch.softmax(Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5, dim=-1) @ V',
}
# exercise -> checks that must fail (None: may lose points through the exercise above)
FAILS = {
    'masked_self_attention': ['check_masked_self_attention_values', 'check_masked_self_attention_single_sequence', 'check_masked_self_attention_causality', 'check_masked_self_attention_gradients', 'check_masked_self_attention_half_precision'],
}
