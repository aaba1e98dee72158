"""Returns multinomial's (B, 1) result without removing the sample axis."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    if temperature == 0:\n        return torch.argmax(logits, dim=-1, keepdim=True)\n    probs = torch.softmax(logits / temperature, dim=-1)\n    return torch.multinomial(probs, 1, generator=generator)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sample_next': ['check_sample_next_shape', 'check_sample_next_distribution', 'check_sample_next_temperature', 'check_sample_next_temperature_zero_is_argmax', 'check_sample_next_reproducible'],
}
# the (B, 1) shape is charged to distribution; the others are not judged (the probe's note says 'does not draw the token whose logit is 60 above the others', which misreads a (B, 1) result)
