"""Converts x to float32 first, so float64 inputs get a float32 result: a mechanical mistake, charged once (gradients are judged at float32's precision)."""

REPLACE = {
    'layer_norm': 'def layer_norm(x, gamma, beta, eps=1e-5):\n    x = x.float()\n    mean = x.mean(dim=-1, keepdim=True)\n    var = x.var(dim=-1, unbiased=False, keepdim=True)\n    return (x - mean) / torch.sqrt(var + eps) * gamma.float() + beta.float()',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'layer_norm': ['check_layer_norm_values'],
}
