"""Keeps the running max, sum and output in float32 but writes O and lse into float64 tensors: float32's precision in float64's dtype."""

REPLACE = {
    'tiled_attention': 'def tiled_attention(Q, K, V, block_q, block_k, causal=False):\n    Nq, d = Q.shape\n    Nk = K.shape[0]\n    O = torch.empty(Nq, V.shape[-1], dtype=Q.dtype)\n    lse = torch.empty(Nq, dtype=Q.dtype)\n    for q0 in range(0, Nq, block_q):\n        Qb = Q[q0:q0 + block_q] / math.sqrt(d)\n        n = Qb.shape[0]\n        m = torch.full((n,), float("-inf"))\n        l = torch.zeros(n)\n        acc = torch.zeros(n, V.shape[-1])\n        k_end = min(Nk, q0 + n) if causal else Nk\n        for k0 in range(0, k_end, block_k):\n            s = (Qb @ K[k0:k0 + block_k].T).float()\n            if causal:\n                rows = torch.arange(q0, q0 + n)[:, None]\n                cols = torch.arange(k0, k0 + s.shape[1])[None, :]\n                s = s.masked_fill(cols > rows, float("-inf"))\n            m_new = torch.maximum(m, s.max(dim=-1).values)\n            alpha = torch.exp(m - m_new)\n            p = torch.exp(s - m_new[:, None])\n            l = l * alpha + p.sum(dim=-1)\n            acc = acc * alpha[:, None] + p @ V[k0:k0 + block_k].float()\n            m = m_new\n        O[q0:q0 + n] = acc / l[:, None]\n        lse[q0:q0 + n] = m + torch.log(l)\n    return O, lse',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'tiled_attention': ['check_tiled_attention_values'],
}
# one precision charge (kind 'precision'); the causal values and the permutation checks judge at float32's precision
