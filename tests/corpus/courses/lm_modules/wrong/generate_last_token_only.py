"""Feeds the model only the last token instead of the whole history."""

REPLACE = {
    'generate': 'def generate(model, prefix, n_new, temperature, generator):\n    tokens = prefix\n    for _ in range(n_new):\n        logits = model(tokens[:, -1:])[:, -1, :]\n        tokens = torch.cat([tokens, sample_next(logits, temperature, generator)[:, None]], dim=1)\n    return tokens',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'generate': ['check_generate_distribution', 'check_generate_greedy'],
}
# uncertain: needs the served model's prediction to depend on more than the last token
