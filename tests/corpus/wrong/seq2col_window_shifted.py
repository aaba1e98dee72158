"""X[i] starts one value late: seq[i+1 : i+1+s]."""

REPLACE = {
    'seq2col': "def seq2col(seq, filter_size):\n    seq = np.asarray(seq)\n    n = len(seq)\n    if not 1 <= filter_size < n:\n        raise ValueError('bad filter_size')\n    X = np.stack([seq[min(i + 1, n - filter_size):min(i + 1, n - filter_size) + filter_size] for i in range(n - filter_size)])\n    return X, seq[filter_size:].copy()",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'seq2col': ['check_seq2col_windows'],
}
