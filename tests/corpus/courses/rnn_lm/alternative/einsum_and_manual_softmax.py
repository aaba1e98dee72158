"""Einsum, split/chunk, a hand-written softmax and log-softmax, a vectorised input term."""

REPLACE = {
    'lstm_cell': "def lstm_cell(x, h, c, W, b):\n    z = torch.einsum('bk,gk->bg', torch.cat([h, x], dim=1), W) + b\n    i, f, o, g = z.chunk(4, dim=1)\n    c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)\n    return torch.sigmoid(o) * torch.tanh(c_next), c_next",
    'rnn_lm_states': "def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):\n    inputs = torch.einsum('td,dh->th', E[tokens], W_xh) + b_h\n    h, out = None, []\n    for t in range(inputs.shape[0]):\n        h = torch.tanh(inputs[t] if h is None else inputs[t] + torch.einsum('h,hk->k', h, W_hh))\n        out.append(h)\n    return torch.stack(out, dim=0)",
    'rnn_lm_loss': 'def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):\n    logits = rnn_lm_states(tokens, E, W_xh, W_hh, b_h) @ W_hy + b_y\n    logp = logits - torch.logsumexp(logits, dim=1, keepdim=True)\n    return -sum(logp[t, tokens[t + 1]] for t in range(len(tokens) - 1))',
    'encoder_decoder_context': "def encoder_decoder_context(S, H):\n    s = torch.einsum('id,jd->ij', S, H)\n    e = torch.exp(s - s.max(dim=1, keepdim=True).values)\n    return torch.einsum('ij,jd->id', e / e.sum(dim=1, keepdim=True), H)",
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    T = x.shape[0]\n    y = torch.zeros_like(x)\n    for k in range(len(w)):\n        s = k * dilation\n        if s < T:\n            y = y + w[k] * torch.cat([torch.zeros(s, dtype=x.dtype), x[:T - s]])\n    return y',
    'receptive_field': 'def receptive_field(kernel_size, dilations):\n    field = 1\n    for d in dilations:\n        field += (kernel_size - 1) * d\n    return field',
}
