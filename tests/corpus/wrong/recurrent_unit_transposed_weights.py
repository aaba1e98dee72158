"""Multiplies by Wrec and Win instead of their transposes."""

REPLACE = {
    'recurrent_unit': 'def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.relu(h_prev @ Wrec + (Win @ x.T).T)',
}
# exercise -> checks that must fail (None: may lose points through the exercise above)
FAILS = {
    'recurrent_unit': ['check_recurrent_unit_values', 'check_recurrent_unit_single_example', 'check_recurrent_unit_gradients'],
}
