"""nbgrader's own commands on a scratch copy of the course (assignments/), as an instructor runs them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.course.release import ASSIGNMENTS_ROOT

SCRATCH = ("__pycache__", "release", "submitted", "autograded", "feedback", "gradebook.db")  # nbgrader's outputs


@dataclass(frozen=True)
class Course:
    root: Path

    def nbgrader(self, *args: str) -> subprocess.CompletedProcess:
        """``nbgrader ARGS`` in the course's folder, with this environment's Python (and its scripts) first;
        a failure raises, with what nbgrader printed."""
        env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
        command = [sys.executable, "-m", "nbgrader", *args]
        return subprocess.run(command, cwd=self.root, env=env, capture_output=True, text=True, check=True)


def generated(assignment: str, folder: Path) -> tuple[Course, subprocess.CompletedProcess]:
    """A copy of the course in ``folder`` with ``assignment`` released by nbgrader's generate_assignment (into
    release/ASSIGNMENT), and what that command printed."""
    course = Course(folder)
    shutil.copytree(ASSIGNMENTS_ROOT, folder, ignore=shutil.ignore_patterns(*SCRATCH))
    return course, course.nbgrader("generate_assignment", assignment, "--force")
