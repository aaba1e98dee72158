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
import sysconfig
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


class NotAttempted(Exception):
    """A bonus exercise left undone (or one that cannot run here): its self-check says so in one line and
    fails nothing, since leaving a bonus undone costs nothing."""


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
        raise SelfCheckFailed(f"{title}\n    your code raised {type(exc).__name__}: {exc}{_where(exc)}") from None
    _passed.append(title)
    return True


_LIBRARIES = tuple(os.path.join(os.path.realpath(p), "") for p in {
    *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")),
    os.path.dirname(os.path.dirname(np.__file__)), os.path.dirname(os.path.dirname(torch.__file__))})


def _where(exc: BaseException) -> str:
    """Where in your code ``exc`` was raised: the last line of the traceback that is in a notebook cell (or in a
    file of yours), never a line of torch, numpy, Python or the self-checks; "" when there is none."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        name = frame.filename
        if "selfcheck" in os.path.basename(name) or name.startswith("<frozen"):
            continue
        if name.startswith("<") or os.path.basename(os.path.dirname(name)).startswith("ipykernel_"):
            return f" (line {frame.lineno} of your cell)"  # Jupyter's names for cells: <ipython-input-...>, ipykernel_*/
        if not os.path.realpath(name).startswith(_LIBRARIES):
            return f" (line {frame.lineno} of {os.path.basename(name)})"
    return ""


def stand_in(original, space: dict, name: str, layout, forward):
    """Your class ``original`` as another class's self-check runs it: your ``__init__`` runs (the attributes,
    helper methods and parameter-free children the other class reads from it are there; one that raises, not
    written yet, is skipped), then ``layout(module, *args)`` gives it the contract's parameters where yours differ,
    and ``forward`` replaces yours. So a class's self-check judges that class alone."""
    base = original if isinstance(original, type) and issubclass(original, torch.nn.Module) else torch.nn.Module

    def __init__(self, *args, **kwargs):
        space[name] = original  # while your __init__ runs, super(YourClass, self) means your class
        try:
            base.__init__(self, *args, **kwargs)
        except Exception:
            torch.nn.Module.__init__(self)
        finally:
            space[name] = made
        layout(self, *args, **kwargs)

    made = type(name, (base,), {"__init__": __init__, "forward": forward, "__call__": torch.nn.Module.__call__})
    return made


@contextlib.contextmanager
def standing_in(cls, makers: dict):
    """While the block runs, each class named in ``makers`` that the methods of ``cls`` read from your notebook is
    ``makers[name](your class, notebook namespace, name)``; afterwards your classes are back."""
    spaces = []
    for f in vars(cls).values() if isinstance(cls, type) else ():
        space = getattr(f, "__globals__", None)
        if isinstance(space, dict) and not any(space is s for s in spaces):
            spaces.append(space)
    saved = [(space, name, space[name]) for space in spaces for name in makers if name in space]
    try:
        for space, name, original in saved:
            space[name] = makers[name](original, space, name)
        yield
    finally:
        for space, name, original in reversed(saved):
            space[name] = original


def keep_only(module, shapes: dict) -> None:
    """Drop from ``module`` every parameter, buffer or child whose state_dict entries are not in ``shapes``."""
    for key in list(torch.nn.Module.state_dict(module)):
        if key not in shapes:
            for table in (module._parameters, module._buffers, module._modules):
                table.pop(key.split(".", 1)[0], None)


def one_line(check):
    """A self-check as the notebook calls it: it prints one line when every property holds, returns
    nothing (so the cell echoes no True/False) and raises at the first property that fails."""

    @functools.wraps(check)
    def run(*functions):
        _passed.clear()
        try:
            check(*functions)
        except NotAttempted as exc:
            print(f"[skipped] {exc}")
            return
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
