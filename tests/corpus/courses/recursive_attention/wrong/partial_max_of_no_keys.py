"""Subtracts the row max by hand, which raises when there are no keys."""

REPLACE = {
    'attention_partial': 'def attention_partial(q, K, V):\n    scores = q @ K.T / math.sqrt(q.shape[-1])\n    m = scores.max(dim=-1, keepdim=True).values\n    e = torch.exp(scores - m)\n    return m.squeeze(-1) + torch.log(e.sum(-1)), (e / e.sum(-1, keepdim=True)) @ V',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'attention_partial': ['check_attention_partial_empty_keys'],
}
