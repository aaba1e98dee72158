"""What a failure shows about the call that failed: each argument by name, and a snippet to rerun it.

The snippet is plain Python text built from the exact argument values: short arrays as literals
with their dtype, longer ones as their raw bytes in base64 (exact, and still one line each). The
grader only writes this text; it never runs it. Everything here is built only when a check fails.
"""

from __future__ import annotations

import base64
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Mapping, Sequence

import numpy as np
import torch

from grader.jail.codec import Unsupported
from grader.results import SNIPPET_HEADING

from .calls import Made

SHOWN_VALUES = 64  # an argument with at most this many numbers is printed in full
LITERAL_VALUES = 256  # ... and written into the snippet as a literal; above it as base64 bytes
SNIPPET_BYTES = 24_000  # above this the snippet would not be short: the call is not given


# The parameter names of the functions being graded, by name, from their declarations (Exercise.reference):
# the judge sets them for the exercise it judges (see naming).
_NAMES: ContextVar[Mapping[str, Sequence[str]]] = ContextVar("argument_names", default={})


@contextmanager
def naming(names: Mapping[str, Sequence[str]]):
    """Within the block, calls of the functions in ``names`` are shown with those parameter names."""
    token = _NAMES.set(names)
    try:
        yield
    finally:
        _NAMES.reset(token)


def argument_names(name: str, n: int) -> tuple[str, ...]:
    """The names of the first ``n`` parameters of the student function ``name`` (arg1, arg2... if unknown)."""
    known = tuple(_NAMES.get().get(name, ()))
    return tuple(known[i] if i < len(known) else f"arg{i + 1}" for i in range(n))


def _array(value) -> tuple[np.ndarray, str, str] | None:
    """(numbers, dtype name, constructor) of a tensor or array, else None."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy(), str(value.dtype).replace("torch.", ""), "torch"
    if isinstance(value, np.ndarray):
        return value, str(value.dtype), "np"
    return None


def _made(value: Made) -> str:
    """An argument the grader had the student's process build, as the student could write it, or in words."""
    if value.kind == "generator":
        return f"torch.Generator().manual_seed({int(value.seed)})"
    if value.kind == "served":
        params = ", ".join(getattr(value.handler, "params", ()))
        return (
            f"the grader's own {value.name}, which your code calls as {value.name}({params}); it exists only "
            f"while your notebook is graded"
        )
    return "an object the grader constructed in your notebook's process while grading it"


def show(value) -> str:
    """A short rendering of one argument: kind, shape and dtype, then its values (the first ones if many)."""
    if isinstance(value, Made):
        return _made(value)
    found = _array(value)
    if isinstance(value, dict) and value and all(_array(v) is not None for v in value.values()):
        return f"dict of {len(value)} arrays:" + "".join(f"\n      {k!r}: {_brief(v)}" for k, v in value.items())
    if found is None:
        text = repr(value) if not isinstance(value, (list, tuple)) else _show_sequence(value)
        return text if len(text) <= 300 else text[:300] + " ..."
    data, dtype, lib = found
    kind = "tensor" if lib == "torch" else "array"
    head = f"{kind} of shape {tuple(data.shape)}, {dtype}"
    if data.size == 0:
        return head + ", empty"
    if data.size <= SHOWN_VALUES:
        body = np.array2string(data, precision=4, separator=", ", threshold=sys.maxsize, max_line_width=100)
        return head + ":\n      " + body.replace("\n", "\n      ")
    return f"{head}; first entries (flattened) {_first_entries(data)}"


def _first_entries(data: np.ndarray) -> str:
    """The first 8 numbers of an array, flattened, on one line ("..." before the bracket when there are more)."""
    flat = data.reshape(-1)
    text = np.array2string(flat[:8], precision=4, separator=", ", max_line_width=sys.maxsize)
    return text if flat.size <= 8 else text[:-1] + ", ...]"


def _brief(value) -> str:
    """An array on one line: kind, shape, dtype and its first entries."""
    data, dtype, lib = _array(value)
    return f"{'tensor' if lib == 'torch' else 'array'} of shape {tuple(data.shape)}, {dtype}: {_first_entries(data)}"


def _show_sequence(value) -> str:
    if len(value) > 16 or any(isinstance(v, (list, tuple, dict)) for v in value):
        inner = [show(v) for v in value[:4]]
        if all("\n" not in s for s in inner) and len(value) <= 4:
            return f"{type(value).__name__} ({'; '.join(inner)})"
        return f"{type(value).__name__} of length {len(value)}"
    if any(_array(v) is not None for v in value):
        return f"{type(value).__name__} of " + "; ".join(show(v).replace("\n      ", " ") for v in value)
    return repr(value)


def describe_arguments(name: str, args) -> str:
    """One line per argument, ``X = ...``, under a heading that names the call."""
    names = argument_names(name, len(args))
    lines = [f"  {n} = {show(a)}" for n, a in zip(names, args)]
    return f"The arguments of {name}({', '.join(names)}):\n" + "\n".join(lines)


# --- the reproduction snippet -------------------------------------------------------------------------


class _NoLiteral(Exception):
    """A value the snippet cannot write down exactly."""


def _number_literal(x) -> str:
    x = x.item() if hasattr(x, "item") else x
    if isinstance(x, float) and not np.isfinite(x):
        return f"float({str(x)!r})"
    return repr(x)


def _array_literal(data: np.ndarray, dtype: str, lib: str, needs: set) -> str:
    if data.dtype.kind not in "biuf":
        raise _NoLiteral(dtype)
    if data.size <= LITERAL_VALUES and np.isfinite(data.astype(np.float64)).all():
        body = np.array2string(data, separator=", ", threshold=sys.maxsize, floatmode="unique", max_line_width=100)
        if data.ndim == 0:
            body = _number_literal(data)
    else:
        if data.nbytes > SNIPPET_BYTES:
            raise _NoLiteral("too large")
        needs.add("import base64")
        raw = base64.b64encode(np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<")).tobytes()).decode()
        shape = ", ".join(str(d) for d in data.shape) + ("," if data.ndim == 1 else "")
        needs.add("import numpy as np")
        dtype = data.dtype.newbyteorder("<").str
        array = f'np.frombuffer(base64.b64decode("{raw}"), dtype="{dtype}").reshape(({shape})).copy()'
        return f"torch.from_numpy({array})" if lib == "torch" else array
    if lib == "torch":
        needs.add("import torch")
        return f"torch.tensor({body}, dtype=torch.{dtype})"
    needs.add("import numpy as np")
    return f"np.array({body}, dtype=np.{dtype})"


def _literal(value, needs: set) -> str:
    found = _array(value)
    if found is not None:
        data, dtype, lib = found
        text = _array_literal(data, dtype, lib, needs)
        if isinstance(value, torch.Tensor) and value.requires_grad:
            text += ".requires_grad_()"
        return text
    if isinstance(value, (bool, int, str, type(None))):
        return repr(value)
    if isinstance(value, float):
        return _number_literal(value)
    if isinstance(value, np.generic):
        needs.add("import numpy as np")
        return f"np.{value.dtype}({_number_literal(value)})"
    if isinstance(value, (list, tuple)):
        parts = [_literal(v, needs) for v in value]
        if isinstance(value, list):
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if isinstance(value, dict):
        items = [f"{_literal(k, needs)}: {_literal(v, needs)}" for k, v in value.items()]
        return "{" + ", ".join(items) + "}" if len(items) <= 1 else "{\n    " + ",\n    ".join(items) + ",\n}"
    if isinstance(value, Made) and value.kind == "generator":
        needs.add("import torch")
        return _made(value)
    if isinstance(value, (Unsupported, Made)):
        raise _NoLiteral(repr(value))
    raise _NoLiteral(type(value).__name__)


def snippet(name: str, args) -> str | None:
    """Python text that rebuilds the arguments with their exact values and makes the same call, or
    None when some argument cannot be written down exactly in a short snippet."""
    names = argument_names(name, len(args))
    needs: set[str] = set()
    try:
        lines = [f"{n} = {_literal(a, needs)}" for n, a in zip(names, args)]
    except _NoLiteral:
        return None
    imports = [i for i in ("import base64", "import numpy as np", "import torch") if i in needs]
    return "\n".join(imports + lines + [f"{name}({', '.join(names)})"])


def stand_in_note(name: str, stand_ins) -> str:
    """Why rerunning a call graded with stand-ins can give other numbers in the student's notebook."""
    others = sorted(s for s in stand_ins if s != name)
    if not others:
        return ""
    helpers = " and ".join(others)
    return (
        f"(This call ran with the grader's stand-in for {helpers} in place of yours, which need not be the "
        f"course's {helpers}, and the expected value assumes it. Run in your notebook, the call uses your "
        f"{helpers}, so its result can differ from the expected value even when {name} is right.)"
    )


# The hint for a call that raised (grader.checking.base.KIND_HINTS), and the one given instead when no call
# can be shown to run.
RERUN_HINT = "Run the call shown above in your notebook: the message and line say where it fails."


def _no_call_hint(name: str) -> str:
    return (
        f"Call {name} in your notebook on arguments like those listed below: the message and line say where it fails."
    )


def _no_snippet(args) -> str:
    """Why no snippet is given."""
    if any(isinstance(a, Made) and a.kind != "generator" for a in args):
        return "(No call can be written down to run: some arguments are the grader's own, described above.)"
    return "(The arguments are too large to write into a short snippet.)"


def _appendix(name: str, args, stand_ins) -> tuple[str, bool]:
    text = describe_arguments(name, args)
    note = stand_in_note(name, stand_ins)
    if note:
        text = f"{text}\n{note}"
    code = snippet(name, args)
    if code is None:
        return f"{text}\n{_no_snippet(args)}", False
    return f"{text}\n{SNIPPET_HEADING}\n{code}", True


def appendix(name: str, args, stand_ins=()) -> str:
    """The arguments and the snippet, as appended to a failure message; ``stand_ins``: the functions the
    call was graded with stand-ins for (said before the snippet)."""
    return _appendix(name, args, stand_ins)[0]


def with_call(message: str, name: str, args, stand_ins=()) -> str:
    """``message`` followed by the call's arguments and a snippet that reruns it; when no snippet can be
    given, a hint to rerun "the call shown above" becomes one that asks for no such call."""
    text, runnable = _appendix(name, args, stand_ins)
    if not runnable:
        message = message.replace(f"Hint: {RERUN_HINT}", f"Hint: {_no_call_hint(name)}")
    return f"{message}\n{text}"
