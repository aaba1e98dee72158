"""sigmoid(z) used where silu(z) = z sigmoid(z) is meant."""

REPLACE = {
    'swiglu': """def swiglu(x, W1, W2, W3):
    return (torch.sigmoid(x @ W1) * (x @ W2)) @ W3""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'swiglu': ['check_swiglu_values'],
}
