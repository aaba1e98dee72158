"""Examples drawn for the checks, kept on disk between processes.

With derandomized settings, the cases hypothesis draws for a check depend only on the check's code, the
strategies and hypothesis itself, never on the student. ``for_all`` draws them once per process; this
module keeps them in a file, so that a process grading one notebook (``seqgrade grade``, a batch
worker) does not pay for drawing them again (about 0.2 s of CPU for sequence_models).

The file's name holds a fingerprint of everything the draws depend on: the source of ``grader/`` and
``reference/`` and the versions of Python, hypothesis, numpy and torch; any change starts a new file.
Cases are stored as tagged JSON (never pickle: the grader reads this file), and a check's cases are
kept only if they come back identical from that form (types, dtypes, shapes, strides and bytes);
otherwise that check draws again in every process.

The folder is ``$SEQGRADE_CACHE_DIR`` (``off`` turns the store off), else ``$XDG_CACHE_HOME/seqgrade``,
else ``~/.cache/seqgrade``. A folder that cannot be read or written only costs the drawing.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import importlib
import json
import math
import sys
from pathlib import Path
from types import CodeType

import numpy as np
import torch

from grader.fsutil import cache_folder, source_digest, write_atomic

FORMAT = 1
_PROJECT = Path(__file__).resolve().parents[2]
_TREES = ("grader", "reference")
_NUMERIC_KINDS = "biuf"


class Unstorable(ValueError):
    """A case holds something the store does not write (it is then drawn in every process)."""


# --- tagged JSON ----------------------------------------------------------------------------------
def encode(x):
    """``x`` as JSON-ready data; raises Unstorable for anything but the types the strategies draw."""
    if x is None or type(x) in (bool, str, int):
        return x
    if type(x) is float:
        return {"f": x.hex()}
    if type(x) in (tuple, list):
        return {"t" if type(x) is tuple else "l": [encode(v) for v in x]}
    if type(x) is dict:
        return {"d": [[encode(k), encode(v)] for k, v in x.items()]}
    if type(x) is np.ndarray or isinstance(x, np.generic):
        if x.dtype.kind not in _NUMERIC_KINDS:
            raise Unstorable(f"array of dtype {x.dtype}")
        return {
            "a" if type(x) is np.ndarray else "n": x.dtype.str,
            "s": list(np.shape(x)),
            "b": base64.b64encode(np.ascontiguousarray(x).tobytes()).decode("ascii"),
        }
    if isinstance(x, torch.dtype):
        return {"dtype": str(x).removeprefix("torch.")}
    cls = type(x)
    if dataclasses.is_dataclass(x) and cls.__module__.startswith("grader."):
        return {
            "dc": f"{cls.__module__}:{cls.__qualname__}",
            "f": {f.name: encode(getattr(x, f.name)) for f in dataclasses.fields(x)},
        }
    raise Unstorable(type(x).__name__)


def decode(data):
    """The inverse of :func:`encode`; raises ValueError on anything it did not write."""
    if data is None or type(data) in (bool, str, int):
        return data
    if type(data) is not dict or len(data) == 0:
        raise ValueError("not a stored case")
    if "f" in data and len(data) == 1:
        return float.fromhex(data["f"])
    if "t" in data:
        return tuple(decode(v) for v in data["t"])
    if "l" in data:
        return [decode(v) for v in data["l"]]
    if "d" in data:
        return {decode(k): decode(v) for k, v in data["d"]}
    if "a" in data or "n" in data:
        dtype = np.dtype(data.get("a") or data.get("n"))
        if dtype.kind not in _NUMERIC_KINDS:
            raise ValueError(f"dtype {dtype}")
        shape = tuple(int(n) for n in data["s"])
        raw = base64.b64decode(data["b"], validate=True)
        if len(raw) != dtype.itemsize * math.prod(shape):
            raise ValueError("array size does not match its shape")
        value = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        return value if "a" in data else value[()]
    if "dtype" in data:
        value = getattr(torch, str(data["dtype"]), None)
        if not isinstance(value, torch.dtype):
            raise ValueError(f"not a torch dtype: {data['dtype']!r}")
        return value
    if "dc" in data:
        module, _, qualname = str(data["dc"]).partition(":")
        if not module.startswith("grader."):
            raise ValueError(f"not one of the grader's classes: {module}")
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise ValueError(f"not a dataclass: {data['dc']}")
        return cls(**{str(k): decode(v) for k, v in data["f"].items()})
    raise ValueError("not a stored case")


def identical(a, b) -> bool:
    """``a`` and ``b`` are the same case: same types all the way down, and the same bits."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return a.hex() == b.hex() or (math.isnan(a) and math.isnan(b))
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return (
            list(a) == list(b)
            and all(identical(x, y) for x, y in zip(a.keys(), b.keys()))
            and all(identical(a[k], b[k]) for k in a)
        )
    if type(a) is np.ndarray or isinstance(a, np.generic):
        return (
            a.dtype == b.dtype
            and np.shape(a) == np.shape(b)
            and np.ndim(a) == np.ndim(b)
            and (type(a) is not np.ndarray or (a.strides == b.strides and a.flags.writeable == b.flags.writeable))
            and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
        )
    if dataclasses.is_dataclass(a):
        return all(identical(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


# --- the store ------------------------------------------------------------------------------------
def fingerprint() -> str:
    """A digest of everything the drawn cases depend on."""
    from importlib.metadata import version

    h = hashlib.sha256(f"{FORMAT} {sys.version} {version('hypothesis')} {np.__version__} {torch.__version__}".encode())
    h.update(source_digest(_PROJECT, _TREES).encode())
    return h.hexdigest()[:24]


def key_of(code: CodeType, max_examples: int, explicit: int, variant: str = "") -> str | None:
    """The stored name of a property's cases, or None for a property outside grader/ (a test's own)."""
    try:
        rel = Path(code.co_filename).resolve().relative_to(_PROJECT / "grader")
    except ValueError:
        return None
    name = getattr(code, "co_qualname", code.co_name)  # co_qualname: Python 3.11+ (the line tells apart the rest)
    return f"{rel.as_posix()}:{name}:{code.co_firstlineno}:{max_examples}:{explicit}" + (
        f":{variant}" if variant else ""
    )


class Store:
    """The cases of every check that has drawn them, read once and written back when some were added."""

    def __init__(self, path: Path | None):
        self.path, self.cases, self.added = path, None, {}

    def _load(self) -> dict:
        if self.cases is None:
            self.cases = {}
            if self.path is not None:
                try:
                    stored = json.loads(self.path.read_text(encoding="utf-8"))
                    if stored.get("format") == FORMAT and isinstance(stored.get("cases"), dict):
                        self.cases = stored["cases"]
                except (OSError, ValueError, AttributeError):
                    pass
        return self.cases

    def get(self, key: str | None) -> list | None:
        """The cases stored under ``key``, decoded, or None."""
        if key is None or key not in self._load():
            return None
        try:
            return [decode(c) for c in self.cases[key]]
        except (ValueError, TypeError, KeyError, AttributeError, ImportError):
            return None

    def put(self, key: str | None, cases: list) -> None:
        """Keep ``cases`` if they come back identical from their stored form."""
        if key is None or self.path is None:
            return
        try:
            data = [encode(c) for c in cases]
            back = [decode(json.loads(json.dumps(d))) for d in data]
        except (Unstorable, ValueError, TypeError):
            return
        if len(back) == len(cases) and all(identical(a, b) for a, b in zip(cases, back)):
            self._load()[key] = self.added[key] = data

    def save(self) -> None:
        """Write the cases drawn since the last save, merged with what another process wrote meanwhile."""
        if not self.added or self.path is None:
            return
        added, self.added = self.added, {}
        merged = Store(self.path)
        try:
            write_atomic(
                self.path, json.dumps({"format": FORMAT, "cases": {**merged._load(), **added}}, separators=(",", ":"))
            )
        except OSError:
            pass


_STORE: Store | None = None


def store() -> Store:
    global _STORE
    if _STORE is None:
        where = cache_folder()
        try:
            path = where / f"examples-{fingerprint()}.json" if where is not None else None
        except OSError:
            path = None
        _STORE = Store(path)
    return _STORE


def save() -> None:
    if _STORE is not None:
        _STORE.save()
