"""Returns a boolean matrix instead of an additive float mask."""

REPLACE = {
    'causal_mask': 'def causal_mask(T):\n    return torch.ones(T, T, dtype=torch.bool).triu(1)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'causal_mask': ['check_causal_mask_shape_and_dtype', 'check_causal_mask_values'],
}
