"""Fills the output with Python floats, so no gradient flows."""

REPLACE = {
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    y = torch.zeros_like(x)\n    for t in range(len(x)):\n        y[t] = float(sum(w[k] * x[t - k * dilation] for k in range(len(w)) if t - k * dilation >= 0))\n    return y',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'causal_conv1d': ['check_causal_conv1d_gradients'],
}
