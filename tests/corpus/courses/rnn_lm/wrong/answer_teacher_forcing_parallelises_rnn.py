"""Answers that teacher forcing parallelises an RNN over time."""

REPLACE = {
    'TEACHER_FORCING_PARALLEL': 'TEACHER_FORCING_PARALLEL = "A"',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'TEACHER_FORCING_PARALLEL': ['check_answer_teacher_forcing_parallel'],
}
