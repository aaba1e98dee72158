"""Every function returns (some of) its inputs unchanged."""

REPLACE = {
    'attention_partial': 'def attention_partial(q, K, V):\n    return q',
    'merge': 'def merge(a, b):\n    return a',
    'online_softmax_attention': 'def online_softmax_attention(q, K, V, block_size):\n    return q',
    'tiled_attention': 'def tiled_attention(Q, K, V, block_q, block_k, causal=False):\n    return Q, K',
    'attention_io': 'def attention_io(N, d, M):\n    return N, d',
    'flash_forward': 'def flash_forward(Q, K, V, causal=False, block_m=16, block_n=16):\n    return Q, K',
}
