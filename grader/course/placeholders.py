"""The text ``seqgrade new-exercise`` writes into a new exercise's cells for its author to replace
(``grader.course.scaffold`` writes it; ``grader.course.release`` refuses a notebook that still holds any)."""

DOCSTRING_PLACEHOLDER = "Say in one line what it returns."  # the solution stub's docstring
EXERCISE_PLACEHOLDER = ": what it computes, its shapes and dtypes, an example."  # after "**Exercise.** Write `f(x)`"
QUESTION_PLACEHOLDER = "**Question.** Ask it here"  # an answer exercise's question
# a written question's text, and the model answer in its answer cell (the solution version shows it; students get
# nbgrader's "YOUR ANSWER HERE")
WRITTEN_PLACEHOLDER = "Ask the question here, and say how long an answer should be."
MODEL_ANSWER_PLACEHOLDER = "Write the model answer here: what a full answer says, for the staff who grade it."
SECTION_PLACEHOLDER = "Name the section"  # the heading new-exercise writes where no section holds the exercise
PLACEHOLDERS = (
    DOCSTRING_PLACEHOLDER,
    EXERCISE_PLACEHOLDER,
    QUESTION_PLACEHOLDER,
    WRITTEN_PLACEHOLDER,
    MODEL_ANSWER_PLACEHOLDER,
    SECTION_PLACEHOLDER,
)
