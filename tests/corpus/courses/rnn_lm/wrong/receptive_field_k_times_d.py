"""Adds K * d per layer instead of (K - 1) * d."""

REPLACE = {
    'receptive_field': 'def receptive_field(kernel_size, dilations):\n    return 1 + sum(kernel_size * d for d in dilations)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'receptive_field': ['check_receptive_field_values'],
}
