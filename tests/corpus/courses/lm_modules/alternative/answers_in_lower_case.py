"""The letters in lower case, with spaces: the answers are read as the same letters."""

REPLACE = {
    'temperature_effect': 'temperature_effect = " b"',
    'why_sample': "why_sample = 'd '",
}
