"""Neither sublayer adds its input back."""

REPLACE = {
    'transformer_block': """def transformer_block(x, params, n_heads, causal):
    p = params
    N = x.shape[-2]
    mask = torch.ones(N, N, dtype=torch.bool).tril() if causal else None
    a = layer_norm(x, p["ln1_gamma"], p["ln1_beta"])
    h = multi_head_attention(a, p["Wq"], p["Wk"], p["Wv"], p["Wo"], n_heads, mask)
    z = layer_norm(h, p["ln2_gamma"], p["ln2_beta"])
    return torch.relu(z @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'transformer_block': ['check_transformer_block_values'],
}
