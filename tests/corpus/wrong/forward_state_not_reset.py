"""Keeps the hidden state from the previous call instead of starting from zero."""

REPLACE = {
    'forward': '_h = {}\ndef forward(seqs, Wrec, Win, Wout):\n    key = (seqs.shape[0], Wrec.shape[0])\n    h = _h.get(key, torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype))\n    for t in range(seqs.shape[1]):\n        h = recurrent_unit(seqs[:, t], h, Wrec, Win)\n    _h[key] = h.detach()\n    return (h @ Wout)[:, 0]',
}
# exercise -> checks that must fail (None: may lose points through the exercise above)
FAILS = {
    'forward': ['check_forward_matches_own_recurrent_unit'],
}
