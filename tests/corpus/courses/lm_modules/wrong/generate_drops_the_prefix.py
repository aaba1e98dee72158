"""Returns only the new tokens."""

REPLACE = {
    'generate': 'def generate(model, prefix, n_new, temperature, generator):\n    tokens = prefix\n    for _ in range(n_new):\n        logits = model(tokens)[:, -1, :]\n        tokens = torch.cat([tokens, sample_next(logits, temperature, generator)[:, None]], dim=1)\n    return tokens[:, prefix.shape[1]:]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'generate': ['check_generate_shape_and_prefix'],
}
# one charge: the other checks judge the new tokens with the prefix put back (rule 1 of fair charging)
