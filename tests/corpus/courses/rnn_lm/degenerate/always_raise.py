"""Every function raises ValueError on every input. None of them may earn a point."""

REPLACE = {
    'lstm_cell': "def lstm_cell(x, h, c, W, b):\n    raise ValueError('not today')",
    'rnn_lm_states': "def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):\n    raise ValueError('not today')",
    'rnn_lm_loss': "def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):\n    raise ValueError('not today')",
    'ngram_probs': "def ngram_probs(tokens, n):\n    raise ValueError('not today')",
    'sequence_log_prob': "def sequence_log_prob(tokens, probs):\n    raise ValueError('not today')",
    'encoder_decoder_context': "def encoder_decoder_context(S, H):\n    raise ValueError('not today')",
    'causal_conv1d': "def causal_conv1d(x, w, dilation):\n    raise ValueError('not today')",
    'receptive_field': "def receptive_field(kernel_size, dilations):\n    raise ValueError('not today')",
}
