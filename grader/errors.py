"""Typed exceptions raised by the grader library. Only the CLI turns them into messages and exit codes."""

from __future__ import annotations

from grader.jail.errors import ProtocolError, SeqgradeError  # noqa: F401  (re-exported: the jail raises them too)


class UsageError(SeqgradeError):
    """The caller asked for something impossible: a missing file, an unknown assignment, a bad option."""


class UnknownAssignment(UsageError):
    def __init__(self, name: str, known: list[str]):
        super().__init__(f"unknown assignment {name!r}; known assignments: {', '.join(known) or 'none'}")
        self.name = name


class OutputNotWritable(UsageError):
    def __init__(self, path, reason: str):
        super().__init__(f"cannot write to {path}: {reason}")


class ArchiveError(UsageError):
    """A submissions archive that cannot be read as a whole (not a zip file, or over the documented caps).
    Raised before anything is graded or written; one bad entry is that entry's problem, never this."""


class InvalidNotebook(SeqgradeError):
    """A submission that cannot be read as a notebook. Graders record it as status 'invalid'."""


class SandboxUnavailable(SeqgradeError):
    """The kernel lacks a feature the requested isolation level needs."""


class SandboxError(SeqgradeError):
    """The sandbox machinery itself failed (not the student's code)."""


class ServerError(SeqgradeError):
    """The grading server cannot be started, reached or trusted."""


class ScoreFileError(UsageError):
    """A TA's score file (or override) that cannot be applied; names the file, row and column at fault.
    Nothing of the file is applied when it is raised."""

    def __init__(self, path, row: int, column: str, problem: str):
        where = (
            f"{path}, row {row}, column {column!r}" if row else f"{path}: column {column!r}" if column else str(path)
        )
        super().__init__(f"{where}: {problem}")
        self.path, self.row, self.column = str(path), row, column


class StudentNotFound(UsageError):
    """Text that names no student of a batch, or several (by name or email): ``candidates`` holds the ids it
    could mean (empty when none)."""

    def __init__(self, message: str, candidates: tuple[str, ...] = ()):
        super().__init__(message)
        self.candidates = candidates
