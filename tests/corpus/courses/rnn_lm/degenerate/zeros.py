"""Every function returns zeros (or an empty table) of the right shape. None of them may earn a point."""

REPLACE = {
    'lstm_cell': 'def lstm_cell(x, h, c, W, b):\n    return (torch.zeros_like(h), torch.zeros_like(c))',
    'rnn_lm_states': 'def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):\n    return torch.zeros(len(tokens), W_hh.shape[0], dtype=E.dtype)',
    'rnn_lm_loss': 'def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):\n    return torch.zeros((), dtype=E.dtype)',
    'ngram_probs': 'def ngram_probs(tokens, n):\n    return {}',
    'sequence_log_prob': 'def sequence_log_prob(tokens, probs):\n    return 0.0',
    'encoder_decoder_context': 'def encoder_decoder_context(S, H):\n    return torch.zeros_like(S)',
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    return torch.zeros_like(x)',
    'receptive_field': 'def receptive_field(kernel_size, dilations):\n    return 0',
}
