"""Returns h_{-1} = 0, h_0, ..., h_{T-2} instead of h_0, ..., h_{T-1}."""

REPLACE = {
    'rnn_lm_states': 'def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):\n    h = torch.zeros(W_hh.shape[0], dtype=E.dtype)\n    out = []\n    for t in range(len(tokens)):\n        out.append(h)\n        h = torch.tanh(E[tokens[t]] @ W_xh + h @ W_hh + b_h)\n    return torch.stack(out)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'rnn_lm_states': ['check_rnn_lm_states_values'],
}
