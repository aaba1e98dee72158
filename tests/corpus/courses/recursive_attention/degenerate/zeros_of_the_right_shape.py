"""Every function returns zeros of the right shape."""

REPLACE = {
    'attention_partial': 'def attention_partial(q, K, V):\n    return torch.zeros(q.shape[:-1], dtype=q.dtype), torch.zeros(*q.shape[:-1], V.shape[-1], dtype=q.dtype)',
    'merge': 'def merge(a, b):\n    return torch.zeros_like(a[0]), torch.zeros_like(a[1])',
    'online_softmax_attention': 'def online_softmax_attention(q, K, V, block_size):\n    return torch.zeros(*q.shape[:-1], V.shape[-1], dtype=q.dtype)',
    'tiled_attention': 'def tiled_attention(Q, K, V, block_q, block_k, causal=False):\n    return torch.zeros(Q.shape[0], V.shape[-1], dtype=Q.dtype), torch.zeros(Q.shape[0], dtype=Q.dtype)',
    'attention_io': 'def attention_io(N, d, M):\n    return (0, 0)',
    'flash_forward': 'def flash_forward(Q, K, V, causal=False, block_m=16, block_n=16):\n    return torch.zeros(Q.shape[0], Q.shape[1]), torch.zeros(Q.shape[0])',
}
