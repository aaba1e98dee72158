"""Turns logits into probabilities by shifting the smallest to 1 and dividing by the sum, without exp."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    if temperature == 0:\n        return torch.argmax(logits, dim=-1)\n    scores = logits / temperature\n    scores = scores - scores.min(dim=-1, keepdim=True).values + 1.0\n    probs = scores / scores.sum(dim=-1, keepdim=True)\n    return torch.multinomial(probs, 1, generator=generator)[:, 0]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sample_next': ['check_sample_next_distribution', 'check_sample_next_temperature'],
}
