"""The released stubs: every function raises NotImplementedError."""

REPLACE = {
    'lstm_cell': 'def lstm_cell(x, h, c, W, b):\n    raise NotImplementedError()',
    'rnn_lm_states': 'def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):\n    raise NotImplementedError()',
    'rnn_lm_loss': 'def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):\n    raise NotImplementedError()',
    'ngram_probs': 'def ngram_probs(tokens, n):\n    raise NotImplementedError()',
    'sequence_log_prob': 'def sequence_log_prob(tokens, probs):\n    raise NotImplementedError()',
    'encoder_decoder_context': 'def encoder_decoder_context(S, H):\n    raise NotImplementedError()',
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    raise NotImplementedError()',
    'receptive_field': 'def receptive_field(kernel_size, dilations):\n    raise NotImplementedError()',
}
