"""collections.Counter for the n-grams, numpy probabilities and logs, float64 arithmetic cast back."""

REPLACE = {
    'ngram_probs': 'def ngram_probs(tokens, n):\n    grams = Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))\n    totals = Counter()\n    for g, k in grams.items():\n        totals[g[:-1]] += k\n    table = {}\n    for g, k in grams.items():\n        table.setdefault(g[:-1], {})[g[-1]] = np.float64(k) / totals[g[:-1]]\n    return table',
    'sequence_log_prob': 'def sequence_log_prob(tokens, probs):\n    ps = np.array([probs.get((a,), {}).get(b, 0.0) for a, b in zip(tokens, tokens[1:])], dtype=float)\n    if np.any(ps == 0):\n        return -np.inf\n    return np.log(ps).sum()',
    'lstm_cell': 'def lstm_cell(x, h, c, W, b):\n    H = h.shape[1]\n    z = (torch.cat([h, x], 1).double() @ W.double().T + b.double())\n    i, f, o, g = z.split(H, 1)\n    c_next = (torch.sigmoid(f) * c.double() + torch.sigmoid(i) * torch.tanh(g))\n    return (torch.sigmoid(o) * torch.tanh(c_next)).to(x.dtype), c_next.to(x.dtype)',
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    K, T = len(w), len(x)\n    y = F.conv1d(x[None, None], w.flip(0)[None, None], padding=(K - 1) * dilation, dilation=dilation)[0, 0]\n    return y[:T]',
    'receptive_field': 'def receptive_field(kernel_size, dilations):\n    return float(1 + (kernel_size - 1) * np.sum(dilations))',
}
