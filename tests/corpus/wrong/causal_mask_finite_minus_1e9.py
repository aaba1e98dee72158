"""Uses -1e9 instead of -inf."""

REPLACE = {
    'causal_mask': 'def causal_mask(T):\n    return torch.triu(torch.full((T, T), -1e9), diagonal=1)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'causal_mask': ['check_causal_mask_values'],
}
