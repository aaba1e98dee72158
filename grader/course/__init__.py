"""What an instructor runs on the course itself: releasing every assignment, adding an exercise's cells
to a notebook and keeping its points in step with the declaration (:mod:`.scaffold`), nbgrader's
autograde without false checksum warnings (:mod:`.nbgrader_autograde`), and their command line (:mod:`.cli`)."""
