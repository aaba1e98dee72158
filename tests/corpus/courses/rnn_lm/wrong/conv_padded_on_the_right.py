"""Pads the zeros after the end, so each output looks at later inputs."""

REPLACE = {
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    K = len(w)\n    padded = F.pad(x[None, None], (0, (K - 1) * dilation))\n    return F.conv1d(padded, w.flip(0)[None, None], dilation=dilation)[0, 0]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'causal_conv1d': ['check_causal_conv1d_values', 'check_causal_conv1d_causality'],
}
