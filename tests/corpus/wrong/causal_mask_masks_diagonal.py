"""Also masks the diagonal, so a position cannot see itself."""

REPLACE = {
    'causal_mask': "def causal_mask(T):\n    return torch.triu(torch.full((T, T), float('-inf')), diagonal=0)",
}
# exercise -> checks that must fail (None: may lose points through the exercise above)
FAILS = {
    'causal_mask': ['check_causal_mask_values'],
    'masked_self_attention': None,
}
