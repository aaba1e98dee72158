"""What an instructor runs on the course itself: releasing every assignment, adding an exercise's cells
to a notebook and keeping its points in step with the declaration (:mod:`.scaffold`), nbgrader's
autograde without false checksum warnings (:mod:`.nbgrader_autograde`), and their command line (:mod:`.cli`)."""

from pathlib import Path

# The nbgrader course root (source notebooks, course config, audit triage). Here, not in .release, so that
# reading the course config imports no nbgrader.
ASSIGNMENTS_ROOT = Path(__file__).resolve().parents[2] / "assignments"
