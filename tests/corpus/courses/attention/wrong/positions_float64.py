"""The table is returned in float64, not torch's default dtype."""

REPLACE = {
    'sinusoidal_positions': """def sinusoidal_positions(T, d):
    t = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    P = torch.zeros(T, d, dtype=torch.float64)
    P[:, 0::2] = torch.sin(t * freq)
    P[:, 1::2] = torch.cos(t * freq)
    return P""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sinusoidal_positions': ['check_sinusoidal_positions_shape_and_dtype'],
}
