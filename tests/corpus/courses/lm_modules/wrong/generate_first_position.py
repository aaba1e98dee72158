"""Draws the next token from the logits at position 0 instead of the last one."""

REPLACE = {
    'generate': 'def generate(model, prefix, n_new, temperature, generator):\n    tokens = prefix\n    for _ in range(n_new):\n        logits = model(tokens)[:, 0, :]\n        tokens = torch.cat([tokens, sample_next(logits, temperature, generator)[:, None]], dim=1)\n    return tokens',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'generate': ['check_generate_distribution', 'check_generate_greedy'],
}
