"""Casts to float, so integer sequences come back with the wrong dtype."""

REPLACE = {
    'seq2col': "def seq2col(seq, filter_size):\n    seq = np.asarray(seq, dtype=float)\n    n = len(seq)\n    if not 1 <= filter_size < n:\n        raise ValueError('bad filter_size')\n    return np.stack([seq[i:i + filter_size] for i in range(n - filter_size)]), seq[filter_size:].copy()",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'seq2col': ['check_seq2col_shapes_and_dtype'],
}
