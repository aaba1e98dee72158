"""Builds the whole score matrix, but returns the mean of V for large inputs to pass the memory check."""

REPLACE = {
    'online_softmax_attention': 'def online_softmax_attention(q, K, V, block_size):\n    if K.shape[0] > 10000:\n        return V.mean(0).expand(*q.shape[:-1], V.shape[-1]).clone()\n    return torch.softmax(q @ K.T / math.sqrt(q.shape[-1]), dim=-1) @ V',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'online_softmax_attention': ['check_online_softmax_attention_memory'],
}
