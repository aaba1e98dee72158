"""Returns Python lists instead of arrays."""

REPLACE = {
    'seq2col': "def seq2col(seq, filter_size):\n    seq = list(seq)\n    if not 1 <= filter_size < len(seq):\n        raise ValueError('bad filter_size')\n    return [seq[i:i + filter_size] for i in range(len(seq) - filter_size)], seq[filter_size:]",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'seq2col': ['check_seq2col_shapes_and_dtype'],
}
