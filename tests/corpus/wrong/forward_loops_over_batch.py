"""Loops over the examples of the batch."""

REPLACE = {
    'forward': 'def forward(seqs, Wrec, Win, Wout):\n    outs = []\n    for b in range(seqs.shape[0]):\n        h = torch.zeros(Wrec.shape[0], dtype=seqs.dtype)\n        for t in range(seqs.shape[1]):\n            h = recurrent_unit(seqs[b, t], h, Wrec, Win)\n        outs.append(h @ Wout[:, 0])\n    return torch.stack(outs)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'forward': ['check_forward_is_vectorized'],
}
