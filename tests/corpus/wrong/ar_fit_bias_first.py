"""Puts the bias first instead of last."""

REPLACE = {
    'ar_fit': 'def ar_fit(seq, filter_size):\n    X, y = seq2col(seq, filter_size)\n    A = np.hstack([np.ones((len(X), 1)), X]).astype(float)\n    return np.linalg.pinv(A) @ y.astype(float)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'ar_fit': ['check_ar_fit_least_squares', 'check_ar_fit_minimum_norm'],
}
