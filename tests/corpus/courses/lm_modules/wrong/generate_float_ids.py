"""Returns the continuation as float64 numbers."""

REPLACE = {
    'generate': 'def generate(model, prefix, n_new, temperature, generator):\n    tokens = prefix\n    with torch.no_grad():\n        for _ in range(n_new):\n            logits = model(tokens)[:, -1, :]\n            next_token = sample_next(logits, temperature, generator)\n            tokens = torch.cat([tokens, next_token[:, None]], dim=1)\n    return tokens.double()',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'generate': ['check_generate_shape_and_prefix'],
}
# charged once, like int32 ids
