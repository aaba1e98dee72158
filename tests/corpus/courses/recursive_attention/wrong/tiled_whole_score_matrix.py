"""Builds the whole N x N score matrix instead of tiles."""

REPLACE = {
    'tiled_attention': "def tiled_attention(Q, K, V, block_q, block_k, causal=False):\n    S = Q @ K.T / math.sqrt(Q.shape[-1])  # (Nq, Nk): all at once\n    if causal:\n        S = S.masked_fill(torch.ones_like(S, dtype=torch.bool).triu(1), float('-inf'))\n    return torch.softmax(S, dim=-1) @ V, torch.logsumexp(S, dim=-1)",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'tiled_attention': ['check_tiled_attention_memory'],
}
