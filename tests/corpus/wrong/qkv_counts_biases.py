"""Counts biases the projections do not have."""

REPLACE = {
    'qkv_param_count': 'def qkv_param_count(d_model, seq_len):\n    return 3 * (d_model * d_model + d_model)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'qkv_param_count': ['check_qkv_param_count_matches_torch'],
}
