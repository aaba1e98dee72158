"""The 1/rms factor is computed in numpy, so autograd misses its derivative."""

REPLACE = {
    'rms_norm': """def rms_norm(x, gamma, eps=1e-5):
    scale = 1 / np.sqrt((x.detach().numpy() ** 2).mean(-1, keepdims=True) + eps)
    return x * torch.from_numpy(scale) * gamma""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'rms_norm': ['check_rms_norm_gradients'],
}
