"""Computes in numpy, so autograd cannot follow it."""

REPLACE = {
    'recurrent_unit': 'def recurrent_unit(x, h_prev, Wrec, Win):\n    z = h_prev.detach().numpy() @ Wrec.detach().numpy().T + x.detach().numpy() @ Win.detach().numpy().T\n    return torch.from_numpy(np.maximum(z, 0))',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'recurrent_unit': ['check_recurrent_unit_gradients'],
}
