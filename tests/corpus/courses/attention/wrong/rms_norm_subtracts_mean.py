"""RMSNorm written as LayerNorm without shift."""

REPLACE = {
    'rms_norm': """def rms_norm(x, gamma, eps=1e-5):
    x = x - x.mean(-1, keepdim=True)
    return x / torch.sqrt((x ** 2).mean(dim=-1, keepdim=True) + eps) * gamma""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'rms_norm': ['check_rms_norm_values'],
}
