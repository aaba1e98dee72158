"""Computes the gates in float32, so float64 inputs get float32 states: a mechanical mistake, charged to the shapes check (which compares dtypes) only."""

REPLACE = {
    'lstm_cell': 'def lstm_cell(x, h, c, W, b):\n    H = h.shape[-1]\n    z = torch.cat([h, x], dim=-1).float() @ W.T.float() + b.float()\n    i, f, o, g = z.split(H, dim=-1)\n    c_next = torch.sigmoid(f) * c.float() + torch.sigmoid(i) * torch.tanh(g)\n    return torch.sigmoid(o) * torch.tanh(c_next), c_next',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'lstm_cell': ['check_lstm_cell_shapes'],
}
