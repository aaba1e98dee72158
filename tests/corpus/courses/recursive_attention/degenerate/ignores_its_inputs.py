"""Each function ignores some of its inputs (the output never depends on the keys): no property may pay."""

REPLACE = {
    'online_softmax_attention': 'def online_softmax_attention(q, K, V, block_size):\n    return V.mean(0).expand(*q.shape[:-1], V.shape[-1]).clone() + q.sum(-1, keepdim=True)',
    'tiled_attention': 'def tiled_attention(Q, K, V, block_q, block_k, causal=False):\n    if causal:\n        O = V.cumsum(0) / torch.arange(1, V.shape[0] + 1, dtype=V.dtype)[:, None] + Q.sum(-1, keepdim=True)\n    else:\n        O = Q.sum(-1, keepdim=True) + V.mean(0)\n    return O, Q.sum(-1) + K.sum()',
    'flash_forward': 'def flash_forward(Q, K, V, causal=False, block_m=16, block_n=16):\n    O = V.cumsum(0)[:Q.shape[0]] if causal else V.mean(0).expand(Q.shape[0], V.shape[1])\n    return O.float() + Q.sum(-1, keepdim=True).float(), Q.sum(-1).float() + K.sum()',
}
