"""Makes a new generator at every step, seeded from the given generator's initial seed and the step, and never
draws from the generator it was given: a second call with the same generator repeats the first continuation
(issue 36: 6/6 before)."""

REPLACE = {
    'generate': 'def generate(model, prefix, n_new, temperature, generator):\n    tokens = prefix\n    with torch.no_grad():\n        for step in range(n_new):\n            logits = model(tokens)[:, -1, :]\n            step_generator = torch.Generator().manual_seed(generator.initial_seed() + step)\n            next_token = sample_next(logits, temperature, step_generator)\n            tokens = torch.cat([tokens, next_token[:, None]], dim=1)\n    return tokens',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'generate': ['check_generate_reproducible'],
}
