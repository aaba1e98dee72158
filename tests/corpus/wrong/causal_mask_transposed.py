"""Masks the past instead of the future."""

REPLACE = {
    'causal_mask': "def causal_mask(T):\n    return torch.tril(torch.full((T, T), float('-inf')), diagonal=-1)",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'causal_mask': ['check_causal_mask_values'],
}
