"""Uses tanh where the unit uses relu."""

REPLACE = {
    'recurrent_unit': 'def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.tanh(h_prev @ Wrec.T + x @ Win.T)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'recurrent_unit': ['check_recurrent_unit_values'],
}
