"""self_attention adds sinusoidal positions itself, so it is no longer equivariant."""

REPLACE = {
    'self_attention': """def self_attention(X, Wq, Wk, Wv):
    X = X + sinusoidal_positions(X.shape[-2], X.shape[-1]).to(X.dtype) if X.shape[-1] % 2 == 0 else X
    Y, _ = scaled_dot_product_attention(X @ Wq, X @ Wk, X @ Wv)
    return Y""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'self_attention': ['check_self_attention_values', 'check_self_attention_permutation_equivariance'],
}
