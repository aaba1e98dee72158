"""y[i] is the last value of window i instead of the value after it."""

REPLACE = {
    'seq2col': "def seq2col(seq, filter_size):\n    seq = np.asarray(seq)\n    n = len(seq)\n    if not 1 <= filter_size < n:\n        raise ValueError('bad filter_size')\n    X = np.stack([seq[i:i + filter_size] for i in range(n - filter_size)])\n    return X, seq[filter_size - 1:-1].copy()",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'seq2col': ['check_seq2col_windows'],
}
