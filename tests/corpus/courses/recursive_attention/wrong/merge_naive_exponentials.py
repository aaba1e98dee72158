"""Adds exp(s_a) and exp(s_b) directly: overflows at 1e4 and gives 0/0 for two empty states."""

REPLACE = {
    'merge': 'def merge(a, b):\n    (s_a, v_a), (s_b, v_b) = a, b\n    z_a, z_b = torch.exp(s_a), torch.exp(s_b)\n    z = z_a + z_b\n    return torch.log(z), (z_a / z)[..., None] * v_a + (z_b / z)[..., None] * v_b',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'merge': ['check_merge_empty_state_is_identity', 'check_merge_stable_for_extreme_scores'],
}
