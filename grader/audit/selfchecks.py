"""Run a notebook's self-check cells the way a student's kernel does: the code cells in order in one
namespace, with the course's ``selfcheck`` module (from the release folder) importable, each self-check
cell after the cells above it. A self-check cell that raises (or runs past the time budget) is what the
student sees as a failure; a cell of their own that raises is seen too.

In-process, like ``tests/test_selfchecks.py``: the code is the instructor's solution with one change, and
a kernel would cost seconds per mutant for the same verdict. Hypothesis does not shrink here: only the
verdict counts, not the smallest counterexample a student would read.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib.util
import io
import json
import os
import signal
import sys
import threading
import warnings
from dataclasses import asdict
from pathlib import Path

import nbformat

from grader.jail.execute import compile_cell, fresh_namespace
from grader.notebook import SELF_CHECK_MARKER, grade_id, is_test_cell

from .model import SelfCheckVerdict


class OutOfTime(BaseException):
    """The time budget ran out (a BaseException, so no ``except Exception`` in the code swallows it)."""


def is_selfcheck(cell) -> bool:
    return cell.cell_type == "code" and (
        grade_id(cell).startswith("selfcheck_") or cell.source.lstrip().startswith(SELF_CHECK_MARKER)
    )


def load_selfcheck_module(folder: Path):
    """The release folder's ``selfcheck.py`` as a fresh module (its helper ``selfcheck_base`` beside it),
    with hypothesis's shrinking turned off."""
    spec = importlib.util.spec_from_file_location("selfcheck", folder / "selfcheck.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(folder))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    settings = getattr(module, "_SETTINGS", None)
    if settings is not None:
        from hypothesis import Phase
        from hypothesis import settings as Settings

        module._SETTINGS = Settings(settings, phases=(Phase.explicit, Phase.reuse, Phase.generate))
    return module


@contextlib.contextmanager
def time_budget(seconds: float | None):
    """Raise OutOfTime in this thread after ``seconds`` of this process's CPU time, or ten times as long on the
    wall clock (a backstop for code that sleeps) (main thread only; else no limit). CPU time, not the wall clock:
    a self-check's verdict must not depend on what else the machine runs (the suite's parallel workers made the
    bonus kernel's self-check, in Triton's interpreter, pass its wall-clock minute on a quiet machine only)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise OutOfTime()

    timers = ((signal.SIGPROF, signal.ITIMER_PROF, seconds), (signal.SIGALRM, signal.ITIMER_REAL, 10 * seconds))
    previous = [signal.signal(sig, expire) for sig, _, _ in timers]
    for _, timer, limit in timers:
        signal.setitimer(timer, limit)
    try:
        yield
    finally:
        for (sig, timer, _), handler in zip(timers, previous):
            signal.setitimer(timer, 0)
            signal.signal(sig, handler)


def run_selfchecks_apart(notebook: Path, module, **options) -> SelfCheckVerdict:
    """:func:`run_selfchecks` in a forked child of this (single-threaded) worker. A Triton kernel runs in
    Triton's interpreter on raw memory, so a store out of bounds corrupts the process it runs in; run here, a
    mutant's kernel would end the worker and its verdict with it. A child that dies is what a student sees when
    the kernel dies under a self-check: a failure they notice."""
    if not hasattr(os, "fork"):
        return run_selfchecks(notebook, module, **options)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read)
        faulthandler.disable()  # its death is reported by the parent, as the verdict
        try:
            text = json.dumps(asdict(run_selfchecks(notebook, module, **options)))
        except BaseException as exc:
            text = json.dumps(asdict(SelfCheckVerdict("error", "", _summary(exc))))
        with os.fdopen(write, "w") as out:
            out.write(text)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        text = answer.read()
    _, status = os.waitpid(pid, 0)
    if text:
        return SelfCheckVerdict(**json.loads(text))
    code = os.waitstatus_to_exitcode(status)
    how = f"signal {-code} ({signal.Signals(-code).name})" if code < 0 else f"exit status {code}"
    return SelfCheckVerdict("failed", "", f"the notebook's process died while its self-checks ran: {how}")


def _summary(exc: BaseException) -> str:
    """The exception's type and its first three lines, in one line: a self-check's title, then why it failed."""
    lines = [line.strip() for line in str(exc).strip().splitlines()[:3]]
    return f"{type(exc).__name__}: {' / '.join(lines)}"[:500]


def run_selfchecks(
    notebook: Path, module, *, after: str = "", budget_s: float | None = 60.0, wrap=None
) -> SelfCheckVerdict:
    """Run the notebook's cells in order and its self-check cells that come after the cell ``after``
    (all of them when it is empty: earlier ones ran before that cell existed); the first that fails is the
    verdict. ``wrap(namespace, selfcheck)``, when given, is called before each cell runs, ``selfcheck`` telling
    whether it is a self-check cell (to record the calls the self-checks make)."""
    nb = nbformat.read(notebook, as_version=4)
    ns = fresh_namespace()
    reached = not after
    saved = sys.modules.get("selfcheck")
    sys.modules["selfcheck"] = module
    sink = io.StringIO()
    try:
        with (
            time_budget(budget_s),
            warnings.catch_warnings(),
            contextlib.redirect_stdout(sink),
            contextlib.redirect_stderr(sink),
        ):
            warnings.simplefilter("ignore")
            for cell in nb.cells:
                if cell.cell_type != "code":
                    continue
                selfcheck = is_selfcheck(cell)
                if not selfcheck and is_test_cell(cell):
                    continue  # a hidden test (empty in a release)
                if selfcheck and not reached:
                    continue
                if wrap is not None:
                    wrap(ns, selfcheck)
                try:
                    exec(compile_cell(cell.source, f"<{grade_id(cell) or 'cell'}>"), ns)
                except OutOfTime:
                    return SelfCheckVerdict("timeout", grade_id(cell), f"still running after {budget_s:g} s")
                except BaseException as exc:
                    return SelfCheckVerdict("failed" if selfcheck else "error", grade_id(cell), _summary(exc))
                reached = reached or grade_id(cell) == after
    except OutOfTime:  # between two cells
        return SelfCheckVerdict("timeout", "", f"still running after {budget_s:g} s")
    finally:
        if saved is None:
            sys.modules.pop("selfcheck", None)
        else:
            sys.modules["selfcheck"] = saved
    return SelfCheckVerdict("ok")
