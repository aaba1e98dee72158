"""Answers that sampling is used because it is cheaper than the argmax."""

REPLACE = {
    'why_sample': 'why_sample = "A"',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'why_sample': ['check_answer_why_sample'],
}
