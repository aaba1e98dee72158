"""Leaves the LayerNorms out of the count."""

REPLACE = {
    'block_param_count': """def block_param_count(D, bias=True):
    return 12 * D * D + (9 * D if bias else 0)""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'block_param_count': ['check_block_param_count_matches_torch'],
}
