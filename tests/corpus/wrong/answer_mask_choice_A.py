"""Picks matrix A (masks the past)."""

REPLACE = {
    'CAUSAL_MASK_CHOICE': 'CAUSAL_MASK_CHOICE = "A"',
}
# exercise -> checks that must fail (None: may lose points through the exercise above)
FAILS = {
    'CAUSAL_MASK_CHOICE': ['check_answer_causal_mask_choice'],
}
