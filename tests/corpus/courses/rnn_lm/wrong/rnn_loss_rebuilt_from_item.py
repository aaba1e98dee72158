"""Rebuilds the loss from .item(), so no gradient flows."""

REPLACE = {
    'rnn_lm_loss': "def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):\n    logits = rnn_lm_states(tokens, E, W_xh, W_hh, b_h)[:-1] @ W_hy + b_y\n    return torch.tensor(F.cross_entropy(logits, tokens[1:], reduction='sum').item(), dtype=E.dtype)",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'rnn_lm_loss': ['check_rnn_lm_loss_gradients'],
}
