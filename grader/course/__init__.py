"""What an instructor runs on the course itself: releasing every assignment, adding an exercise's cells
to a notebook and keeping its points in step with the declaration (:mod:`.scaffold`), nbgrader's
autograde without false checksum warnings (:mod:`.nbgrader_autograde`), and their command line (:mod:`.cli`)."""
from pathlib import Path

from grader.errors import UnknownAssignment

# The nbgrader course root (source notebooks, course config, audit triage). Here, not in .release, so that
# reading the course config imports no nbgrader.
ASSIGNMENTS_ROOT = Path(__file__).resolve().parents[2] / "assignments"


def assignment_folders(root: Path | None = None) -> list[str]:
    """The assignments of the course root (default ``ASSIGNMENTS_ROOT``), in name order: every folder of ``source/``."""
    source = (ASSIGNMENTS_ROOT if root is None else root) / "source"
    return sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))) \
        if source.is_dir() else []


def source_dir(assignment: str, root: Path | None = None) -> Path:
    root = ASSIGNMENTS_ROOT if root is None else root
    folder = root / "source" / assignment
    if not folder.is_dir():
        raise UnknownAssignment(assignment, assignment_folders(root))
    return folder
