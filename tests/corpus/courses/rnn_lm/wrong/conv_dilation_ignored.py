"""Ignores the dilation (taps at x[t - k]), with padding for dilation 1."""

REPLACE = {
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    K = len(w)\n    padded = F.pad(x[None, None], (K - 1, 0))\n    return F.conv1d(padded, w.flip(0)[None, None], dilation=1)[0, 0]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'causal_conv1d': ['check_causal_conv1d_values'],
}
