"""The kinds of failure a check can find, and how the feedback names each (plain data: the pages and the
summary read it without importing the checks)."""

FAILURE_KINDS = {
    # kind: how the feedback names it (the root cause of an exercise is the first failure's kind)
    "missing": "not defined",
    "cell_error": "its cell did not run",
    "raised": "raised an exception",
    "timeout": "ran out of time",
    "crash": "ended the notebook's process",
    "resources": "asked the grader for too much",  # a stand-in reply or a message beyond the call's allowance
    "type": "wrong type",
    "shape": "wrong shape",
    "dtype": "wrong dtype",
    "precision": "computed at a coarser precision",  # float32 arithmetic on float64 inputs (grader.checking.mechanical)
    "values": "wrong values",
    "not_differentiable": "not differentiable",
    "degenerate": "does no real work",
    "not_judged": "not judged",
    "not_graded": "not graded",  # the notebook itself could not be graded (unreadable, another assignment's)
    "check_error": "grader fault",
}
