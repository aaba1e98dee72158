"""Draws from a private copy of the generator's state, so the generator it was given never advances: two calls
with one generator return the same tokens (issue 36: 7/7 before; a generate built on it draws the same token at
every step)."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    if temperature == 0:\n        return torch.argmax(logits, dim=-1)\n    private = torch.Generator().set_state(generator.get_state())\n    probs = torch.softmax(logits / temperature, dim=-1)\n    return torch.multinomial(probs, 1, generator=private)[:, 0]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sample_next': ['check_sample_next_reproducible'],
}
