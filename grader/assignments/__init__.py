"""One module per assignment, each defining ``ASSIGNMENT``; grader.registry collects them."""
