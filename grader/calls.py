"""How checks reach student code: the ``StudentCode`` interface, replies, and what can go wrong.

A backend (the sandbox, or in-process for the nbgrader hook and the benchmark's lower bound) runs
the student's notebook and answers calls with plain data that has crossed :mod:`grader.codec`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence


@dataclass(frozen=True)
class Reply:
    value: Any
    grads: tuple | None = None  # one gradient per requested argument; None when the output was not differentiable
    trace: tuple = ()  # shapes of the first argument of each call to the traced function
    args_after: tuple | None = None  # the arguments as the call left them (to detect mutation)
    stdout: str = ""


class StudentRaised(Exception):
    """The student's function raised; carries only text from the student's process."""

    def __init__(self, type_name: str, message: str, where: str = ""):
        super().__init__(f"{type_name}: {message}")
        self.type_name, self.message, self.where = type_name, message, where


class StudentMissing(Exception):
    def __init__(self, name: str, detail: str = ""):
        super().__init__(f"{name} is not defined" + (f" ({detail})" if detail else ""))
        self.name, self.detail = name, detail


class StudentAborted(BaseException):
    """The call cannot finish: it ran out of time or the student's process died.

    A BaseException, so hypothesis does not keep calling a function that hangs while it shrinks.
    """

    status = "error"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class StudentTimeout(StudentAborted):
    status = "timeout"


class StudentCrashed(StudentAborted):
    status = "error"


class StudentCode(Protocol):
    def defines(self, name: str) -> bool: ...

    def get(self, name: str) -> Any: ...

    def call(self, name: str, args: Sequence, *, grad_wrt: Sequence[int] = (), cotangent=None,
             trace: str | None = None, return_args: bool = False) -> Reply: ...
