"""Returns the new state with an extra leading axis, (1, B, d_h): a mechanical mistake, charged to the values check only."""

REPLACE = {
    'recurrent_unit': 'def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.relu(h_prev @ Wrec.T + x @ Win.T).unsqueeze(0)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'recurrent_unit': ['check_recurrent_unit_values'],
}
