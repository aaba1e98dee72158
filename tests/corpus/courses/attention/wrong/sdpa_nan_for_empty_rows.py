"""A query with no allowed key gets NaN (softmax of -inf only), not zeros."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    A = torch.softmax(scores, dim=-1)
    return A @ V, A""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'scaled_dot_product_attention': ['check_sdpa_fully_masked_row'],
}
