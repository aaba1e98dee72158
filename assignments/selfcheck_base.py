"""What every assignment's self-checks share: running a property, failing the cell when it does not
hold, and printing one line when all of a self-check's properties do. Each assignment's selfcheck.py
imports it; it ships beside the notebook (one copy in the course's source tree, linked into each
assignment's folder). It needs only numpy, torch and hypothesis.
"""
from __future__ import annotations

import contextlib
import functools
import io
import os
import tempfile
import traceback
import warnings

# Keep hypothesis's cache out of your assignment folder.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "selfcheck-hypothesis"))

import numpy as np
import torch


class PropertyFailed(AssertionError):
    """A property of the exercise does not hold; the message gives the smallest input that shows it."""


class SelfCheckFailed(AssertionError):
    """A self-check failed: the cell fails too, so Run All, Validate and ``nbgrader validate`` report it."""


_passed: list[str] = []  # titles of the properties that held in the self-check now running


def run(title: str, prop) -> bool:
    """Run one property; raise if it does not hold (with the smallest counterexample), else note its title.

    An exercise still raising NotImplementedError (the released stub) fails the cell with
    NotImplementedError, as every other cell that calls the stub does in an nbgrader notebook."""
    sink = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
            warnings.simplefilter("ignore")
            prop()
    except NotImplementedError:
        raise NotImplementedError(f"{title}: not implemented yet") from None
    except PropertyFailed as exc:
        raise SelfCheckFailed(f"{title}\n    {exc}") from None
    except Exception as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if "selfcheck" not in f.filename]
        where = f" (line {frames[-1].lineno} of your cell)" if frames else ""
        raise SelfCheckFailed(f"{title}\n    your code raised {type(exc).__name__}: {exc}{where}") from None
    _passed.append(title)
    return True


def one_line(check):
    """A self-check as the notebook calls it: it prints one line when every property holds, returns
    nothing (so the cell echoes no True/False) and raises at the first property that fails."""

    @functools.wraps(check)
    def run(*functions):
        _passed.clear()
        check(*functions)
        print("[ok] " + "; ".join(_passed))

    return run


def require(ok: bool, message: str) -> None:
    if not ok:
        raise PropertyFailed(message)


def require_value_error(function, *args, why: str) -> None:
    """Fail unless ``function(*args)`` raises ValueError; ``why`` says why it must."""
    try:
        function(*args)
    except ValueError:
        return
    shown = ", ".join(repr(a) for a in args)
    raise PropertyFailed(f"{getattr(function, '__name__', 'the function')}({shown}) should raise ValueError: {why}")


def randn(seed, *shape):
    """Standard normal float64 numbers of the given shape, reproducible from ``seed`` (a stream of their own,
    so the self-checks' examples are not the grader's)."""
    return torch.from_numpy(np.random.default_rng([seed, 29]).standard_normal(shape))


def one_line_checks(namespace: dict) -> None:
    """Make every ``check_*`` function of a selfcheck module a one-line, cell-failing self-check."""
    for name, check in list(namespace.items()):
        if name.startswith("check_") and callable(check):
            namespace[name] = one_line(check)
