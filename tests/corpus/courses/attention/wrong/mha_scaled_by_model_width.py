"""Attention written out per head with 1/sqrt(D) instead of 1/sqrt(Dh)."""

REPLACE = {
    'multi_head_attention': """def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    D = X.shape[-1]
    if D % n_heads != 0:
        raise ValueError("n_heads must divide D")
    Dh = Wq.shape[1] // n_heads

    Q, K, V = ((X @ W).unflatten(-1, (n_heads, Dh)).transpose(-3, -2) for W in (Wq, Wk, Wv))
    scores = Q @ K.transpose(-2, -1) / math.sqrt(D)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    Y = torch.softmax(scores, dim=-1) @ V
    return Y.transpose(-3, -2).flatten(-2) @ Wo""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'multi_head_attention': ['check_mha_values'],
}
