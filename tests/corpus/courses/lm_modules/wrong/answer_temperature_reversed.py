"""Answers that a temperature below 1 flattens the distribution."""

REPLACE = {
    'temperature_effect': 'temperature_effect = "A"',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'temperature_effect': ['check_answer_temperature_effect'],
}
