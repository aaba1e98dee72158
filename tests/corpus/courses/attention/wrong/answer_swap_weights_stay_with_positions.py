"""Keeps the weights attached to positions after the swap."""

REPLACE = {
    'SWAP_POLL_OUTPUT': 'SWAP_POLL_OUTPUT = [0.1, 0.6, 0.4, 0.1]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'SWAP_POLL_OUTPUT': ['check_answer_swap_poll_output'],
}
