"""Multiplies by Wrec and Win instead of their transposes."""

REPLACE = {
    'recurrent_unit': 'def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.relu(h_prev @ Wrec + (Win @ x.T).T)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'recurrent_unit': ['check_recurrent_unit_values'],
}
