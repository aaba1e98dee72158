"""Works only for batched inputs (an einsum with a batch index)."""

REPLACE = {
    'recurrent_unit': "def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.relu(torch.einsum('bh,kh->bk', h_prev, Wrec) + torch.einsum('bi,ki->bk', x, Win))",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'recurrent_unit': ['check_recurrent_unit_single_example'],
}
