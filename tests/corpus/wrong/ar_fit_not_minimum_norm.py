"""A least-squares solution, but not the one of smallest norm."""

REPLACE = {
    'ar_fit': 'def ar_fit(seq, filter_size):\n    X, y = seq2col(seq, filter_size)\n    A = np.hstack([X, np.ones((len(X), 1))]).astype(float)\n    P = np.linalg.pinv(A)\n    return P @ y + (np.eye(A.shape[1]) - P @ A) @ np.ones(A.shape[1])',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'ar_fit': ['check_ar_fit_minimum_norm'],
}
