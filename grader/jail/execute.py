"""Run a notebook's code cells in a namespace, as if the student ran every cell once, in order.

This module runs in the student's process (the sandbox child, or the in-process backend). It imports
nothing but the standard library. An exception in one cell is recorded and the next cell still runs.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import sys
import traceback
import types

MAX_CAPTURE = 64 * 1024


class CappedText(io.TextIOBase):
    """A text sink that keeps the first MAX_CAPTURE characters and drops the rest (no memory blow-up)."""

    def __init__(self, limit: int = MAX_CAPTURE):
        self.parts: list[str] = []
        self.size, self.limit = 0, limit

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        text = str(text)
        if self.size < self.limit:
            self.parts.append(text[: self.limit - self.size])
            self.size += len(self.parts[-1])
        return len(text)

    def getvalue(self) -> str:
        return "".join(self.parts)


class _NoIPython:
    """Stands in for ``get_ipython()``: magics and shell escapes do nothing; anything else is refused."""

    def run_line_magic(self, *args, **kwargs):
        return None

    def run_cell_magic(self, *args, **kwargs):
        return None

    def system(self, *args, **kwargs):
        return None

    def getoutput(self, *args, **kwargs):
        return []

    def __getattr__(self, name):
        raise AttributeError(f"seqgrade runs notebooks without IPython, so get_ipython().{name} is not available")


class _InertModule(types.ModuleType):
    """Stands in for a helper module the course ships beside the notebook (``selfcheck``): the grader
    skips the cells that use it, so every attribute is a function that does nothing."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


@contextlib.contextmanager
def course_modules(names):
    """Make ``import NAME`` work for each course helper module while the cells run (then restore)."""
    saved = {name: sys.modules.get(name) for name in names}
    for name in names:
        sys.modules[name] = _InertModule(name)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def fresh_namespace() -> dict:
    shell = _NoIPython()
    return {
        "__name__": "__main__",
        "__builtins__": __builtins__,
        "get_ipython": lambda: shell,
        "display": lambda *objs, **kwargs: None,
    }


def describe_exception(exc: BaseException, limit: int = 2000) -> dict:
    """Type, message and the innermost line of student code (``<cell N>``) that raised."""
    try:
        message = str(exc)
    except Exception:
        message = "<the exception's message could not be shown>"
    where = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith("<cell"):
            where = f"{frame.filename[1:-1]}, line {frame.lineno}"
            break
    return {"type": type(exc).__name__[:100], "message": message[:limit], "where": where}


def compile_cell(source: str, name: str):
    """``source`` compiled as the file ``name``, and, as IPython does, its text kept where inspect.getsource
    finds it: Triton's interpreter reads a kernel's source when it runs it, so a name once given to other text
    (an earlier notebook in this process) would run that text instead."""
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    return compile(source, name, "exec")


def run_cell(index: int, source: str, ns: dict) -> dict:
    """Execute one cell; return {"index", "status": "ok"|"error", "message"}."""
    sink = CappedText()
    name = f"<cell {index}>"
    try:
        code = compile_cell(source, name)
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            exec(code, ns)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt: the student's cell ends, grading goes on
        info = describe_exception(exc)
        where = f" ({info['where']})" if info["where"] else ""
        return {"index": index, "status": "error", "message": f"{info['type']}: {info['message'][:300]}{where}"}
    return {"index": index, "status": "ok", "message": ""}
