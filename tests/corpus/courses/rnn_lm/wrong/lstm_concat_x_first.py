"""Concatenates [x; h] instead of [h; x]."""

REPLACE = {
    'lstm_cell': 'def lstm_cell(x, h, c, W, b):\n    H = h.shape[1]\n    z = torch.cat([x, h], dim=1) @ W.T + b\n    i, f, o, g = z[:, :H], z[:, H:2 * H], z[:, 2 * H:3 * H], z[:, 3 * H:]\n    i, f, o, g = torch.sigmoid(i), torch.sigmoid(f), torch.sigmoid(o), torch.tanh(g)\n    c_next = f * c + i * g\n    return o * torch.tanh(c_next), c_next',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'lstm_cell': ['check_lstm_cell_matches_torch'],
}
