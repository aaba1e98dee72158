"""Returns the table with a leading batch axis, shape (1, T, d): a mechanical mistake, charged to the shape check only."""

REPLACE = {
    'sinusoidal_positions': 'def sinusoidal_positions(T, d):\n    t = torch.arange(T, dtype=torch.float64).unsqueeze(1)\n    freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n    P = torch.zeros(T, d, dtype=torch.float64)\n    P[:, 0::2] = torch.sin(t * freq)\n    P[:, 1::2] = torch.cos(t * freq)\n    return P.to(torch.get_default_dtype())[None]  # (1, T, d)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sinusoidal_positions': ['check_sinusoidal_positions_shape_and_dtype'],
}
