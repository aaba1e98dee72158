"""Calls attention_partial on all the keys at once: the whole score matrix, computed by a helper."""

REPLACE = {
    'online_softmax_attention': 'def online_softmax_attention(q, K, V, block_size):\n    return attention_partial(q, K, V)[1]',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'online_softmax_attention': ['check_online_softmax_attention_memory'],
}
