"""Inverse-CDF sampling: one torch.rand number per row against the cumulative sums (searchsorted)."""

REPLACE = {
    'sample_next': 'def sample_next(logits, temperature, generator):\n    if temperature == 0:\n        return logits.argmax(dim=-1)\n    cdf = torch.softmax(logits / temperature, dim=-1).cumsum(dim=-1)\n    u = torch.rand(logits.shape[0], 1, generator=generator, dtype=cdf.dtype)\n    index = torch.searchsorted(cdf, u * cdf[:, -1:], right=True)[:, 0]\n    return index.clamp(max=logits.shape[1] - 1)',
}
