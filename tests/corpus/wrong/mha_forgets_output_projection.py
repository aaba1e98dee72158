"""Counts Q, K, V but not the output projection."""

REPLACE = {
    'mha_param_count': "def mha_param_count(d_model, n_heads, bias=True):\n    if d_model % n_heads:\n        raise ValueError('heads')\n    return 3 * d_model * d_model + (3 * d_model if bias else 0)",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'mha_param_count': ['check_mha_param_count_matches_torch'],
}
