"""Every function returns the same value whatever its input."""

REPLACE = {
    'attention_partial': 'def attention_partial(q, K, V):\n    return torch.tensor(0.0), torch.zeros(2)',
    'merge': 'def merge(a, b):\n    return torch.tensor(0.0), torch.zeros(2)',
    'online_softmax_attention': 'def online_softmax_attention(q, K, V, block_size):\n    return torch.ones(2)',
    'tiled_attention': 'def tiled_attention(Q, K, V, block_q, block_k, causal=False):\n    return torch.ones(2, 2), torch.zeros(2)',
    'attention_io': 'def attention_io(N, d, M):\n    return (1, 1)',
    'flash_forward': 'def flash_forward(Q, K, V, causal=False, block_m=16, block_n=16):\n    return torch.ones(2, 2), torch.zeros(2)',
}
