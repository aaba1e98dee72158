"""Every column gets its own frequency 1/10000^(j/d) instead of sharing one per pair."""

REPLACE = {
    'sinusoidal_positions': """def sinusoidal_positions(T, d):
    P = torch.zeros(T, d)
    for t in range(T):
        for j in range(d):
            angle = t / 10000 ** (j / d)
            P[t, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return P""",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sinusoidal_positions': ['check_sinusoidal_positions_values'],
}
