"""Multiplies the logits by the temperature instead of dividing."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    if temperature == 0:\n        return torch.argmax(logits, dim=-1)\n    probs = torch.softmax(logits * temperature, dim=-1)\n    return torch.multinomial(probs, 1, generator=generator)[:, 0]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sample_next': ['check_sample_next_temperature'],
}
