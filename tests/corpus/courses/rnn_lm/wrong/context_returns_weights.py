"""Returns the attention weights softmax(S H^T) instead of the context vectors."""

REPLACE = {
    'encoder_decoder_context': 'def encoder_decoder_context(S, H):\n    return torch.softmax(S @ H.T, dim=-1)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'encoder_decoder_context': ['check_encoder_decoder_context_shape', 'check_encoder_decoder_context_values', 'check_encoder_decoder_context_weights_sum_to_one', 'check_encoder_decoder_context_encoder_order'],
}
