"""Samples inline with torch's global stream instead of the generator."""

REPLACE = {
    'generate': 'def generate(model, prefix, n_new, temperature, generator):\n    tokens = prefix\n    for _ in range(n_new):\n        logits = model(tokens)[:, -1, :]\n        if temperature == 0:\n            nxt = logits.argmax(dim=-1)\n        else:\n            nxt = torch.multinomial(torch.softmax(logits / temperature, dim=-1), 1)[:, 0]\n        tokens = torch.cat([tokens, nxt[:, None]], dim=1)\n    return tokens',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'generate': ['check_generate_reproducible'],
}
