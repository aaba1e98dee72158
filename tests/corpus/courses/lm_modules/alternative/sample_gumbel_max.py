"""The Gumbel-max trick: argmax of logits / T plus Gumbel noise from the generator."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    if temperature == 0:\n        return logits.argmax(dim=-1)\n    u = torch.rand(logits.shape, generator=generator, dtype=logits.dtype)\n    return torch.argmax(logits / temperature - torch.log(-torch.log(u)), dim=-1)',
}
