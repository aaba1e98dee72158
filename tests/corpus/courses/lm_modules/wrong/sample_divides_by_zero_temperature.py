"""No special case for temperature 0: logits / 0 makes NaN probabilities."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    probs = torch.softmax(logits / temperature, dim=-1)\n    return torch.multinomial(probs, 1, generator=generator)[:, 0]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sample_next': ['check_sample_next_temperature_zero_is_argmax'],
}
