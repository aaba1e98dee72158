"""Passes w to F.conv1d unflipped (a correlation), so w[0] multiplies the oldest input."""

REPLACE = {
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    K = len(w)\n    padded = F.pad(x[None, None], ((K - 1) * dilation, 0))\n    return F.conv1d(padded, w[None, None], dilation=dilation)[0, 0]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'causal_conv1d': ['check_causal_conv1d_values'],
}
