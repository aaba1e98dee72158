"""The LSTM cell ignores x, h and W; the context ignores the decoder states: no property may pay."""

REPLACE = {
    'lstm_cell': 'def lstm_cell(x, h, c, W, b):\n    H = h.shape[1]\n    c2 = c + torch.sigmoid(b[:H])\n    return torch.tanh(c2), c2',
    'encoder_decoder_context': 'def encoder_decoder_context(S, H):\n    return H.mean(0, keepdim=True).expand(S.shape[0], -1).clone()',
}
