"""Swaps merge's weights; online softmax reduces the block states with functools.partial(functools.reduce, merge)."""

REPLACE = {
    'merge': 'def merge(a, b):\n    """The state of the union of two disjoint key sets, from their states a = (s_a, v_a) and b = (s_b, v_b)."""\n    (s_a, v_a), (s_b, v_b) = a, b\n    top = torch.maximum(s_a, s_b)\n    top = torch.where(torch.isinf(top), torch.zeros_like(top), top)  # both empty: avoid -inf - (-inf)\n    w_a, w_b = torch.exp(s_a - top), torch.exp(s_b - top)  # at most 1, so nothing overflows\n    total = w_a + w_b\n    s = top + torch.log(total)  # -inf when both states are empty\n    safe = torch.where(total > 0, total, torch.ones_like(total))\n    v = (w_b / safe)[..., None] * v_a + (w_a / safe)[..., None] * v_b  # (..., dv)\n    return s, v',
    'online_softmax_attention': 'import functools\nmerge_all = functools.partial(functools.reduce, merge)\n\ndef online_softmax_attention(q, K, V, block_size):\n    states = [attention_partial(q, K[i:i + block_size], V[i:i + block_size]) for i in range(0, K.shape[0], block_size)]\n    return merge_all(states)[1]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'merge': ['check_merge_matches_union', 'check_merge_associative', 'check_merge_empty_state_is_identity', 'check_merge_stable_for_extreme_scores', 'check_merge_partition_invariance'],
}
