"""The concatenated heads are returned without Wo."""

REPLACE = {
    'multi_head_attention': """def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    D = X.shape[-1]
    if D % n_heads != 0:
        raise ValueError("n_heads must divide D")
    Dh = Wq.shape[1] // n_heads

    def split(W):
        return (X @ W).unflatten(-1, (n_heads, Dh)).transpose(-3, -2)

    Y, _ = scaled_dot_product_attention(split(Wq), split(Wk), split(Wv), mask)
    return Y.transpose(-3, -2).flatten(-2)""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'multi_head_attention': ['check_mha_values', 'check_mha_causality', 'check_mha_permutation_equivariance', 'check_mha_rejects_indivisible_heads'],
}
