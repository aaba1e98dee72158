"""Keeps the reduced axis: s has shape (1,) or (Nq, 1)."""

REPLACE = {
    'attention_partial': 'def attention_partial(q, K, V):\n    """The state (s, v) of query q (or queries, one per row) over the keys K with values V."""\n    if K.shape[0] == 0:  # no keys: the empty state\n        s = torch.full(q.shape[:-1], float("-inf"), dtype=q.dtype)\n        return s, torch.zeros(*q.shape[:-1], V.shape[-1], dtype=V.dtype)\n    scores = q @ K.T / math.sqrt(q.shape[-1])  # (Nk,) or (Nq, Nk)\n    return torch.logsumexp(scores, dim=-1, keepdim=True), torch.softmax(scores, dim=-1) @ V',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'attention_partial': ['check_attention_partial_shapes'],
}
