"""Fits without the column of ones and reports a zero bias."""

REPLACE = {
    'ar_fit': 'def ar_fit(seq, filter_size):\n    X, y = seq2col(seq, filter_size)\n    w = np.linalg.pinv(X.astype(float)) @ y.astype(float)\n    return np.append(w, 0.0)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'ar_fit': ['check_ar_fit_least_squares', 'check_ar_fit_minimum_norm'],
}
