"""Every function returns the same plausible-looking value whatever its input. None of them may earn a point."""

REPLACE = {
    'lstm_cell': 'def lstm_cell(x, h, c, W, b):\n    return (torch.ones(2, 3, dtype=torch.float64), torch.ones(2, 3, dtype=torch.float64))',
    'rnn_lm_states': 'def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):\n    return torch.ones(4, 3, dtype=torch.float64)',
    'rnn_lm_loss': 'def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):\n    return torch.tensor(2.5, dtype=torch.float64)',
    'ngram_probs': "def ngram_probs(tokens, n):\n    return {('cows',): {'eat': 1.0}}",
    'sequence_log_prob': 'def sequence_log_prob(tokens, probs):\n    return -1.5',
    'encoder_decoder_context': 'def encoder_decoder_context(S, H):\n    return torch.ones(2, 2, dtype=torch.float64)',
    'causal_conv1d': 'def causal_conv1d(x, w, dilation):\n    return torch.ones(6, dtype=torch.float64)',
    'receptive_field': 'def receptive_field(kernel_size, dilations):\n    return 7',
}
