"""cos in the even columns and sin in the odd ones."""

REPLACE = {
    'sinusoidal_positions': """def sinusoidal_positions(T, d):
    t = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    P = torch.zeros(T, d, dtype=torch.float64)
    P[:, 0::2] = torch.cos(t * freq)
    P[:, 1::2] = torch.sin(t * freq)
    return P.to(torch.get_default_dtype())""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sinusoidal_positions': ['check_sinusoidal_positions_values'],
}
