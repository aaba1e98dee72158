"""Returns multinomial's (B, 1) result without removing the sample axis."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    if temperature == 0:\n        return torch.argmax(logits, dim=-1, keepdim=True)\n    probs = torch.softmax(logits / temperature, dim=-1)\n    return torch.multinomial(probs, 1, generator=generator)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sample_next': ['check_sample_next_shape'],
}
# uncertain: whether the other checks judge a (B, 1) result or report it
