"""Subtracts the larger s without a guard: merging two empty states gives NaN."""

REPLACE = {
    'merge': 'def merge(a, b):\n    """The state of the union of two disjoint key sets, from their states a = (s_a, v_a) and b = (s_b, v_b)."""\n    (s_a, v_a), (s_b, v_b) = a, b\n    top = torch.maximum(s_a, s_b)\n    w_a, w_b = torch.exp(s_a - top), torch.exp(s_b - top)  # at most 1, so nothing overflows\n    total = w_a + w_b\n    s = top + torch.log(total)  # -inf when both states are empty\n    safe = torch.where(total > 0, total, torch.ones_like(total))\n    v = (w_a / safe)[..., None] * v_a + (w_b / safe)[..., None] * v_b  # (..., dv)\n    return s, v',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'merge': ['check_merge_empty_state_is_identity'],
}
