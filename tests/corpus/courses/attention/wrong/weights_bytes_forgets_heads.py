"""Counts one N x N matrix, not one per head."""

REPLACE = {
    'attention_weights_bytes': """def attention_weights_bytes(N, H, bytes_per_element):
    return N * N * bytes_per_element""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'attention_weights_bytes': ['check_attention_weights_bytes_values'],
}
