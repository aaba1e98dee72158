"""Returns the Python list of states, forgetting torch.stack."""

REPLACE = {
    'rnn_lm_states': 'def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):\n    h = torch.zeros(W_hh.shape[0], dtype=E.dtype)\n    out = []\n    for t in range(len(tokens)):\n        h = torch.tanh(E[tokens[t]] @ W_xh + h @ W_hh + b_h)\n        out.append(h)\n    return out',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'rnn_lm_states': ['check_rnn_lm_states_shape'],
}
