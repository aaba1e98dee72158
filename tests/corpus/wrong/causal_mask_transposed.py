"""Masks the past instead of the future."""

REPLACE = {
    'causal_mask': "def causal_mask(T):\n    return torch.tril(torch.full((T, T), float('-inf')), diagonal=-1)",
}
# exercise -> checks that must fail (None: may lose points through the exercise above)
FAILS = {
    'causal_mask': ['check_causal_mask_values'],
    'masked_self_attention': None,
}
