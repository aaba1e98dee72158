"""Answers that self-attention with positions added is still equivariant."""

REPLACE = {
    'EQUIVARIANT_WITH_POSITIONS': 'EQUIVARIANT_WITH_POSITIONS = True',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'EQUIVARIANT_WITH_POSITIONS': ['check_answer_equivariant_with_positions'],
}
