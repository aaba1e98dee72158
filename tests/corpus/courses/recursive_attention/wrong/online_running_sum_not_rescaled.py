"""Never rescales the running sums when the running max grows."""

REPLACE = {
    'online_softmax_attention': 'def online_softmax_attention(q, K, V, block_size):\n    """softmax(q K^T / sqrt(d)) V in one pass over blocks of block_size keys."""\n    single = q.ndim == 1\n    Q = q[None] if single else q  # (Nq, d)\n    m = torch.full((Q.shape[0],), float("-inf"), dtype=Q.dtype)  # running max of the scores\n    l = torch.zeros(Q.shape[0], dtype=Q.dtype)  # running sum of exp(score - m)\n    acc = torch.zeros(Q.shape[0], V.shape[-1], dtype=Q.dtype)  # running sum of exp(score - m) v\n    for start in range(0, K.shape[0], block_size):\n        s = Q @ K[start:start + block_size].T / math.sqrt(Q.shape[-1])  # (Nq, b)\n        m_new = torch.maximum(m, s.max(dim=-1).values)\n        alpha = torch.exp(m - m_new)  # rescales what was summed under the old max (0 at the start)\n        p = torch.exp(s - m_new[:, None])  # (Nq, b)\n        l = l + p.sum(dim=-1)\n        acc = acc + p @ V[start:start + block_size]\n        m = m_new\n    y = acc / l[:, None]  # (Nq, dv)\n    return y[0] if single else y',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'online_softmax_attention': ['check_online_softmax_attention_values', 'check_online_softmax_attention_large_scores'],
}
