"""Returns multinomial's (B, 1) result without removing the sample axis."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    if temperature == 0:\n        return torch.argmax(logits, dim=-1, keepdim=True)\n    probs = torch.softmax(logits / temperature, dim=-1)\n    return torch.multinomial(probs, 1, generator=generator)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sample_next': ['check_sample_next_shape'],
}
# one charge: the other checks judge the (B, 1) ids with the singleton axis undone (rule 1 of fair charging)
