"""Returns F.conv1d's (1, 1, T) output without removing the batch and channel axes."""

REPLACE = {
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    K = len(w)\n    padded = F.pad(x[None, None], ((K - 1) * dilation, 0))\n    return F.conv1d(padded, w.flip(0)[None, None], dilation=dilation)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'causal_conv1d': ['check_causal_conv1d_shape'],
}
