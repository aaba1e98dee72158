"""eps is added to the standard deviation, not to the variance."""

REPLACE = {
    'layer_norm': """def layer_norm(x, gamma, beta, eps=1e-5):
    return (x - x.mean(-1, keepdim=True)) / (x.std(-1, unbiased=False, keepdim=True) + eps) * gamma + beta""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'layer_norm': ['check_layer_norm_values'],
}
