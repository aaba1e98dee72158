"""Atomic file writes (temp file + os.replace) so a killed run never leaves a half-written report, and
digests of source trees."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: str | bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def ensure_writable_dir(path: str | Path) -> Path:
    """Create ``path`` if needed and prove it is writable; raise OSError otherwise."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-"):
        pass
    return path


def cache_folder() -> Path | None:
    """Where the grader keeps what it can make again (drawn examples, assignment outlines, released cells):
    ``$SEQGRADE_CACHE_DIR`` (``off``: nowhere), else ``$XDG_CACHE_HOME/seqgrade``, else ``~/.cache/seqgrade``."""
    chosen = os.environ.get("SEQGRADE_CACHE_DIR")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "seqgrade"


def source_digest(root: Path, trees: tuple[str, ...]) -> str:
    """A digest of every ``*.py`` file under ``root/tree`` for each tree: names relative to root, and bytes."""
    h = hashlib.sha256()
    for tree in trees:
        for path in sorted((root / tree).rglob("*.py")):
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()
