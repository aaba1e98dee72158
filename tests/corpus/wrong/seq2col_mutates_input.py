"""Writes into the array it was given."""

REPLACE = {
    'seq2col': "def seq2col(seq, filter_size):\n    n = len(seq)\n    if not 1 <= filter_size < n:\n        raise ValueError('bad filter_size')\n    arr = np.asarray(seq)\n    X = np.stack([arr[i:i + filter_size].copy() for i in range(n - filter_size)])\n    y = arr[filter_size:].copy()\n    if isinstance(seq, np.ndarray):\n        seq[:] = 0\n    return X, y",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'seq2col': ['check_seq2col_leaves_input_unchanged'],
}
