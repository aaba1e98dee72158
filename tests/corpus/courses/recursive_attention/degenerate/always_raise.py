"""Every function raises on every input."""

REPLACE = {
    'attention_partial': "def attention_partial(q, K, V):\n    raise ValueError('not today')",
    'merge': "def merge(a, b):\n    raise ValueError('not today')",
    'online_softmax_attention': "def online_softmax_attention(q, K, V, block_size):\n    raise ValueError('not today')",
    'tiled_attention': "def tiled_attention(Q, K, V, block_q, block_k, causal=False):\n    raise ValueError('not today')",
    'attention_io': "def attention_io(N, d, M):\n    raise ValueError('not today')",
    'flash_forward': "def flash_forward(Q, K, V, causal=False, block_m=16, block_n=16):\n    raise ValueError('not today')",
}
