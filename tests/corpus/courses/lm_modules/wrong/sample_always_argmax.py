"""Always returns the argmax: greedy, whatever the temperature."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    return torch.argmax(logits, dim=-1)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sample_next': ['check_sample_next_distribution', 'check_sample_next_temperature', 'check_sample_next_reproducible'],
}
# temperature and reproducible are not judged: the argmax draws nothing
