"""Starts from h = 1 instead of h = 0."""

REPLACE = {
    'forward': 'def forward(seqs, Wrec, Win, Wout):\n    h = torch.ones(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)\n    for t in range(seqs.shape[1]):\n        h = recurrent_unit(seqs[:, t], h, Wrec, Win)\n    return (h @ Wout)[:, 0]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'forward': ['check_forward_composes_recurrent_unit'],
}
