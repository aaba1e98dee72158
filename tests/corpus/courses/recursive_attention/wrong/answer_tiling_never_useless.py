"""Answers D: tiling always helps."""

REPLACE = {
    'TILING_DOES_NOT_HELP': 'TILING_DOES_NOT_HELP = "D"',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'TILING_DOES_NOT_HELP': ['check_answer_tiling_does_not_help'],
}
