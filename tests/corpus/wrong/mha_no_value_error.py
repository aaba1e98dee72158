"""Never checks that n_heads divides d_model."""

REPLACE = {
    'mha_param_count': 'def mha_param_count(d_model, n_heads, bias=True):\n    return 4 * d_model * d_model + (4 * d_model if bias else 0)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'mha_param_count': ['check_mha_param_count_rejects_indivisible_heads'],
}
