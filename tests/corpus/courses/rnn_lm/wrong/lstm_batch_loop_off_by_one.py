"""Loops over the batch and pairs example b with the state of example b - 1."""

REPLACE = {
    'lstm_cell': 'def lstm_cell(x, h, c, W, b):\n    H = h.shape[1]\n    hs, cs = [], []\n    for n in range(x.shape[0]):\n        z = W @ torch.cat([h[n - 1], x[n]]) + b\n        i, f, o, g = torch.sigmoid(z[:H]), torch.sigmoid(z[H:2*H]), torch.sigmoid(z[2*H:3*H]), torch.tanh(z[3*H:])\n        cs.append(f * c[n] + i * g)\n        hs.append(o * torch.tanh(cs[-1]))\n    return torch.stack(hs), torch.stack(cs)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'lstm_cell': ['check_lstm_cell_matches_torch', 'check_lstm_cell_batch_permutation_equivariance'],
}
