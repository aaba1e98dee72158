"""Always counts the biases."""

REPLACE = {
    'block_param_count': """def block_param_count(D, bias=True):
    return 12 * D * D + 13 * D""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'block_param_count': ['check_block_param_count_matches_torch'],
}
