"""Picks matrix A (masks the past)."""

REPLACE = {
    'CAUSAL_MASK_CHOICE': 'CAUSAL_MASK_CHOICE = "A"',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'CAUSAL_MASK_CHOICE': ['check_answer_causal_mask_choice'],
}
