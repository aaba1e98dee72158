"""LayerNorm divides by D - 1 (unbiased variance); transformer_block, graded with the course's layer_norm, keeps its points."""

REPLACE = {
    'layer_norm': """def layer_norm(x, gamma, beta, eps=1e-5):
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + eps) * gamma + beta""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'layer_norm': ['check_layer_norm_values'],
}
