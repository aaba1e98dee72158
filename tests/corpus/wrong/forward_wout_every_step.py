"""Applies Wout at every step and sums the readouts."""

REPLACE = {
    'forward': 'def forward(seqs, Wrec, Win, Wout):\n    h = torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)\n    total = 0\n    for t in range(seqs.shape[1]):\n        h = recurrent_unit(seqs[:, t], h, Wrec, Win)\n        total = total + (h @ Wout)[:, 0]\n    return total',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'forward': ['check_forward_composes_recurrent_unit'],
}
