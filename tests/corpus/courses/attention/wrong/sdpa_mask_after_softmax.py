"""The mask multiplies the weights after the softmax, so rows no longer sum to 1."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores
    A = torch.softmax(scores, dim=-1)
    A = A * mask if mask is not None else A
    return A @ V, A""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'scaled_dot_product_attention': ['check_sdpa_values', 'check_sdpa_weights_are_distributions'],
}
