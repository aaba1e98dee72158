"""The shift register moves values the wrong way."""

REPLACE = {
    'ar_as_recurrent': 'def ar_as_recurrent(w):\n    w = torch.as_tensor(np.asarray(w, dtype=float))\n    s = len(w)\n    Wrec = torch.diag(torch.ones(s - 1, dtype=w.dtype), diagonal=1)\n    win = torch.zeros(s, dtype=w.dtype)\n    win[0] = 1.0\n    return Wrec, win, w.flip(0)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'ar_as_recurrent': ['check_ar_as_recurrent_reproduces_ar_model'],
}
