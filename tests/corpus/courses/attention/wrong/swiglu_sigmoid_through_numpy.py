"""The sigmoid of silu is computed in numpy, so autograd misses its derivative."""

REPLACE = {
    'swiglu': """def swiglu(x, W1, W2, W3):
    a = x @ W1
    sig = torch.from_numpy(1 / (1 + np.exp(-a.detach().numpy())))
    return (a * sig * (x @ W2)) @ W3""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'swiglu': ['check_swiglu_gradients'],
}
