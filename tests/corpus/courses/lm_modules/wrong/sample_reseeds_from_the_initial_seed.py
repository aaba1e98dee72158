"""Seeds torch's global stream from the generator's initial seed at every call and draws from it: the same
seed gives the same tokens, but the generator never advances, so two calls with one generator repeat
themselves (issue 36: 7/7 before)."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    if temperature == 0:\n        return torch.argmax(logits, dim=-1)\n    torch.manual_seed(generator.initial_seed())\n    probs = torch.softmax(logits / temperature, dim=-1)\n    return torch.multinomial(probs, 1)[:, 0]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sample_next': ['check_sample_next_reproducible'],
}
