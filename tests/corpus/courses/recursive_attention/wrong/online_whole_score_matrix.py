"""Computes the whole score matrix and its softmax at once."""

REPLACE = {
    'online_softmax_attention': 'def online_softmax_attention(q, K, V, block_size):\n    return torch.softmax(q @ K.T / math.sqrt(q.shape[-1]), dim=-1) @ V',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'online_softmax_attention': ['check_online_softmax_attention_memory'],
}
