"""Scales the scores by 1/sqrt(d), which this exercise does not ask for."""

REPLACE = {
    'encoder_decoder_context': 'def encoder_decoder_context(S, H):\n    return torch.softmax(S @ H.T / S.shape[1] ** 0.5, dim=-1) @ H',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'encoder_decoder_context': ['check_encoder_decoder_context_values'],
}
