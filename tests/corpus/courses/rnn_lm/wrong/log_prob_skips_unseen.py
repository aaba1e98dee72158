"""Skips unseen bigrams instead of returning -inf."""

REPLACE = {
    'sequence_log_prob': 'def sequence_log_prob(tokens, probs):\n    total = 0.0\n    for prev, word in zip(tokens[:-1], tokens[1:]):\n        p = probs.get((prev,), {}).get(word, 0.0)\n        if p > 0:\n            total += math.log(p)\n    return total',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sequence_log_prob': ['check_sequence_log_prob_unseen_is_minus_inf'],
}
