"""Keeps the hidden state from the previous call instead of starting from zero."""

REPLACE = {
    'forward': '_h = {}\ndef forward(seqs, Wrec, Win, Wout):\n    key = (seqs.shape[0], Wrec.shape[0])\n    h = _h.get(key, torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype))\n    for t in range(seqs.shape[1]):\n        h = recurrent_unit(seqs[:, t], h, Wrec, Win)\n    _h[key] = h.detach()\n    return (h @ Wout)[:, 0]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {  # a forward with hidden state fails every property that calls it twice
    'forward': ['check_forward_composes_recurrent_unit', 'check_forward_gradients', 'check_forward_batch_permutation_equivariance', 'check_forward_batch_independence'],
}
