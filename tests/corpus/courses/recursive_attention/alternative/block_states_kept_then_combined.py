"""Keeps one small state per key block in a list and combines them at the end."""

REPLACE = {
    'online_softmax_attention': 'def online_softmax_attention(q, K, V, block_size):\n    Q = q if q.ndim == 2 else q[None]\n    parts = []\n    for i in range(0, K.shape[0], block_size):\n        s = Q @ K[i:i + block_size].T / math.sqrt(Q.shape[-1])\n        m = s.max(-1).values\n        p = torch.exp(s - m[:, None])\n        parts.append((m, p.sum(-1), p @ V[i:i + block_size]))\n    M = torch.stack([m for m, _, _ in parts]).max(0).values\n    l = sum(l * torch.exp(m - M) for m, l, _ in parts)\n    acc = sum(a * torch.exp(m - M)[:, None] for m, _, a in parts)\n    out = acc / l[:, None]\n    return out if q.ndim == 2 else out[0]',
}
