"""The block adds sinusoidal positions to its input itself."""

REPLACE = {
    'transformer_block': """def transformer_block(x, params, n_heads, causal):
    p = params
    N = x.shape[-2]
    mask = torch.ones(N, N, dtype=torch.bool).tril() if causal else None
    a = layer_norm(x + sinusoidal_positions(N, x.shape[-1]).to(x.dtype), p["ln1_gamma"], p["ln1_beta"])
    h = x + multi_head_attention(a, p["Wq"], p["Wk"], p["Wv"], p["Wo"], n_heads, mask)
    z = layer_norm(h, p["ln2_gamma"], p["ln2_beta"])
    return h + torch.relu(z @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
# Causality fails too: the block is graded with the course's sinusoidal_positions, which refuses an odd d
# (the exercise asks for d even), and the causality check draws d = 1.
FAILS = {
    'transformer_block': ['check_transformer_block_values', 'check_transformer_block_causality',
                          'check_transformer_block_permutation_equivariance'],
}
