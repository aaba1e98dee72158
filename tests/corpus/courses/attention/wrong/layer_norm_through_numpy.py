"""LayerNorm computed in numpy: right values, no gradients."""

REPLACE = {
    'layer_norm': """def layer_norm(x, gamma, beta, eps=1e-5):
    a, g, b = x.detach().numpy(), gamma.detach().numpy(), beta.detach().numpy()
    out = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + eps) * g + b
    return torch.from_numpy(out)""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'layer_norm': ['check_layer_norm_gradients'],
}
