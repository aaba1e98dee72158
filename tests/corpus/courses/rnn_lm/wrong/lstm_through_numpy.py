"""Computes the cell in numpy and wraps the result: right values, no gradients."""

REPLACE = {
    'lstm_cell': 'def lstm_cell(x, h, c, W, b):\n    H = h.shape[1]\n    z = np.concatenate([h.numpy(), x.numpy()], 1) @ W.numpy().T + b.numpy()\n    s = lambda v: 1 / (1 + np.exp(-v))\n    c2 = s(z[:, H:2*H]) * c.numpy() + s(z[:, :H]) * np.tanh(z[:, 3*H:])\n    return torch.from_numpy(s(z[:, 2*H:3*H]) * np.tanh(c2)), torch.from_numpy(c2)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'lstm_cell': ['check_lstm_cell_gradients'],
}
