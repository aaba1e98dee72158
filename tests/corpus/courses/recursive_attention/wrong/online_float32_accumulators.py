"""Accumulates in float32 whatever the inputs' dtype: a mechanical mistake, charged once (to the values check, which compares dtypes)."""

REPLACE = {
    'online_softmax_attention': 'def online_softmax_attention(q, K, V, block_size):\n    single = q.ndim == 1\n    Q = q[None] if single else q\n    m = torch.full((Q.shape[0],), float("-inf"))  # float32 accumulators\n    l = torch.zeros(Q.shape[0])\n    acc = torch.zeros(Q.shape[0], V.shape[-1])\n    for start in range(0, K.shape[0], block_size):\n        s = (Q @ K[start:start + block_size].T / math.sqrt(Q.shape[-1])).float()\n        m_new = torch.maximum(m, s.max(dim=-1).values)\n        alpha = torch.exp(m - m_new)\n        p = torch.exp(s - m_new[:, None])\n        l = l * alpha + p.sum(dim=-1)\n        acc = acc * alpha[:, None] + p @ V[start:start + block_size].float()\n        m = m_new\n    y = acc / l[:, None]\n    return y[0] if single else y',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'online_softmax_attention': ['check_online_softmax_attention_values'],
}
