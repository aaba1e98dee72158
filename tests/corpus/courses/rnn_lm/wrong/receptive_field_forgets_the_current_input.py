"""Returns sum (K - 1) d, without the current input."""

REPLACE = {
    'receptive_field': 'def receptive_field(kernel_size, dilations):\n    return sum((kernel_size - 1) * d for d in dilations)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'receptive_field': ['check_receptive_field_values'],
}
