"""A least-squares solution, but not the one of smallest norm."""

REPLACE = {
    'ar_fit': 'def ar_fit(seq, filter_size):\n    X, y = seq2col(seq, filter_size)\n    A = np.hstack([X, np.ones((len(X), 1))]).astype(float)\n    P = np.linalg.pinv(A)\n    return P @ y + (np.eye(A.shape[1]) - P @ A) @ np.ones(A.shape[1])',
}
# exercise -> checks that must fail (None: may lose points through the exercise above)
FAILS = {
    'ar_fit': ['check_ar_fit_minimum_norm'],
}
