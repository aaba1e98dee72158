"""Every function returns its first input (the LSTM its previous states). None of them may earn a point."""

REPLACE = {
    'lstm_cell': 'def lstm_cell(x, h, c, W, b):\n    return (h, c)',
    'rnn_lm_states': 'def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):\n    return tokens',
    'rnn_lm_loss': 'def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):\n    return tokens',
    'ngram_probs': 'def ngram_probs(tokens, n):\n    return tokens',
    'sequence_log_prob': 'def sequence_log_prob(tokens, probs):\n    return tokens',
    'encoder_decoder_context': 'def encoder_decoder_context(S, H):\n    return S',
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    return x',
    'receptive_field': 'def receptive_field(kernel_size, dilations):\n    return kernel_size',
}
