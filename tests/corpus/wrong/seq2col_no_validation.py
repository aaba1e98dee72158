"""Never raises ValueError for a filter_size out of range."""

REPLACE = {
    'seq2col': 'def seq2col(seq, filter_size):\n    seq = np.asarray(seq)\n    n = len(seq)\n    X = np.array([seq[i:i + filter_size] for i in range(max(n - filter_size, 0))]).reshape(-1, max(filter_size, 0))\n    return X, seq[filter_size:].copy()',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'seq2col': ['check_seq2col_rejects_bad_filter_size'],
}
