"""The weights are detached, so no gradient reaches Q and K."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    A = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0).detach()
    return A @ V, A""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'scaled_dot_product_attention': ['check_sdpa_gradients'],
}
