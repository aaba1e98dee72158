"""The text ``seqgrade new-exercise`` writes into a new exercise's cells for its author to replace
(``grader.course.scaffold`` writes it; ``grader.course.release`` refuses a notebook that still holds any)."""

DOCSTRING_PLACEHOLDER = "Say in one line what it returns."  # the solution stub's docstring
EXERCISE_PLACEHOLDER = ": what it computes, its shapes and dtypes, an example."  # after "**Exercise.** Write `f(x)`"
QUESTION_PLACEHOLDER = "**Question.** Ask it here"  # an answer exercise's question
PLACEHOLDERS = (DOCSTRING_PLACEHOLDER, EXERCISE_PLACEHOLDER, QUESTION_PLACEHOLDER)
