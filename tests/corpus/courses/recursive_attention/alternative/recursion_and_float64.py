"""Merges blocks by recursion (halving the key range) and computes in float64, returning the input's dtype."""

REPLACE = {
    'online_softmax_attention': 'def online_softmax_attention(q, K, V, block_size):\n    def state(lo, hi):\n        if hi - lo <= block_size:\n            s = q.double() @ K[lo:hi].double().T / math.sqrt(q.shape[-1])\n            return torch.logsumexp(s, -1), torch.softmax(s, -1) @ V[lo:hi].double()\n        mid = lo + (hi - lo) // 2\n        (sa, va), (sb, vb) = state(lo, mid), state(mid, hi)\n        s = torch.logaddexp(sa, sb)\n        return s, torch.exp(sa - s)[..., None] * va + torch.exp(sb - s)[..., None] * vb\n    return state(0, K.shape[0])[1].to(q.dtype)',
    'merge': 'def merge(a, b):\n    (s_a, v_a), (s_b, v_b) = a, b\n    s = torch.logaddexp(s_a, s_b)\n    safe = torch.where(torch.isinf(s), torch.zeros_like(s), s)\n    w_a = torch.where(torch.isinf(s_a), torch.zeros_like(s_a), torch.exp(s_a - safe))\n    w_b = torch.where(torch.isinf(s_b), torch.zeros_like(s_b), torch.exp(s_b - safe))\n    return s, w_a.unsqueeze(-1) * v_a + w_b.unsqueeze(-1) * v_b',
}
