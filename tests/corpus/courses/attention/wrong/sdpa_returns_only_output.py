"""Returns Y alone, not the pair (Y, A)."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    A = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return A @ V""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'scaled_dot_product_attention': ['check_sdpa_returns_output_and_weights', 'check_sdpa_values', 'check_sdpa_weights_are_distributions', 'check_sdpa_fully_masked_row', 'check_sdpa_query_permutation_equivariance', 'check_sdpa_key_value_permutation_invariance', 'check_sdpa_gradients'],
}
