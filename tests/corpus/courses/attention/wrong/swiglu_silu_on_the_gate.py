"""silu applied to x W2 instead of x W1."""

REPLACE = {
    'swiglu': """def swiglu(x, W1, W2, W3):
    return ((x @ W1) * torch.nn.functional.silu(x @ W2)) @ W3""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'swiglu': ['check_swiglu_values'],
}
