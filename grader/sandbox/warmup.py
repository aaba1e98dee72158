"""One-time work never fails correct code: a function's first call may load code from disk.

A correct ``scaled_dot_product_attention`` that calls ``torch.broadcast_shapes`` makes torch import sympy
on its first call: 0.2-0.6 s of CPU and some 16 MB of files read, against a call budget of 0.1 s. So the
first time a function's call runs over its CPU budget *while the jail has been reading files* (at least
``READ_BYTES`` since the call began: an import, or data loaded lazily), the budget stretches once to
``Limits.warmup_cpu_s``; if the call then returns, it is made again, warm, under the ordinary budget,
and the second call is the one judged. Code that only computes reads nothing, so a loop that never ends
still costs one ordinary budget. The allowance belongs to each callable once per notebook process
(:func:`callable_key`): a function, a class's construction, and each method of the class's objects, so the
one-time work a ``forward`` does on its first call is allowed even though the class was constructed first.

What the jail read is taken from ``/proc/PID/io`` (``rchar``) by the grader, outside the jail.
"""

from __future__ import annotations

from .procfs import tree_pids

READ_BYTES = 64 * 1024  # an import reads .pyc files; sympy's is 16 MB


def tree_read_bytes(root: int) -> int:
    """Bytes read through read() calls by process ``root`` and its descendants (``rchar`` in /proc)."""
    total = 0
    for pid in tree_pids(root):
        try:
            with open(f"/proc/{pid}/io") as f:
                for line in f:
                    if line.startswith("rchar:"):
                        total += int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            continue
    return total


def callable_key(name: str, op: str = "call", handle: str | None = None, method: str | None = None) -> str:
    """What a first-call allowance belongs to: function ``name``, the construction of class ``name``
    (``name()``), or one method of its objects (``name.forward``; the same for every object of the class,
    which shares its code and so its one-time work)."""
    if op == "construct":
        return f"{name}()"
    if handle is None:
        return name
    return f"{name}.{method or '__call__'}" if op == "call" else f"{name}.{op}"
