"""lstm_cell through torch.func.vmap over the batch, the states written in place into a tensor made beforehand, the convolution as an einsum over unfolded windows in float64."""

REPLACE = {
    'lstm_cell': 'def lstm_cell(x, h, c, W, b):\n    H = h.shape[-1]\n    def one(x1, h1, c1):  # one example of the batch\n        i, f, o, g = (W @ torch.cat([h1, x1]) + b).split(H)\n        c2 = torch.sigmoid(f) * c1 + torch.sigmoid(i) * torch.tanh(g)\n        return torch.sigmoid(o) * torch.tanh(c2), c2\n    return torch.func.vmap(one)(x, h, c)',
    'rnn_lm_states': 'def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):\n    out = torch.zeros(len(tokens), W_hh.shape[0], dtype=E.dtype)\n    h = torch.zeros(W_hh.shape[0], dtype=E.dtype)\n    for t in range(len(tokens)):\n        h = torch.tanh(E[tokens[t]] @ W_xh + h @ W_hh + b_h)\n        out[t] = h  # in place\n    return out',
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    K = w.shape[0]\n    padded = torch.cat([torch.zeros((K - 1) * dilation, dtype=torch.float64), x.double()])\n    windows = padded.unfold(0, (K - 1) * dilation + 1, 1)[:, ::dilation]  # (T, K): oldest first\n    return torch.einsum("tk,k->t", windows, w.double().flip(0)).to(x.dtype)',
}
