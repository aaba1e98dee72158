"""Returns the token ids as float64 numbers."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    if temperature == 0:\n        return torch.argmax(logits, dim=-1).double()\n    probs = torch.softmax(logits / temperature, dim=-1)\n    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1).double()',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'sample_next': ['check_sample_next_shape'],
}
# charged once, like int32 ids: the other checks read whole-number ids whatever their dtype
