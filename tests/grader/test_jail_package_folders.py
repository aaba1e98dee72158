"""The jail leaves out the package folders Python does not use (grader.jail.root_plan.unused_package_folders):
the base interpreter's site-packages under a virtual environment sits in folders the jail needs (the standard
library's, libpython's), which are then bound entry by entry without it."""

import os
import re
import secrets
import shutil
import site
import sys
from pathlib import Path

import pytest

from grader.jail import root_plan
from grader.sandbox.client import Session

from .jail_session import zygote  # noqa: F401 (a fixture)
from .test_jail_walls import WALK_LIMITS


def test_a_package_folder_python_does_not_use_is_not_in_the_jail(zygote):
    """The base interpreter's site-packages under a virtual environment (or the user's) sits in folders the jail
    needs (the standard library's; libpython's): those are bound entry by entry, without it. A file planted
    there is not visible, nor is the folder."""
    in_use = [os.path.realpath(p) for p in sys.path if p]
    unused = [
        real
        for real in {os.path.realpath(f) for f in site.getsitepackages([sys.base_prefix])}
        if os.path.isdir(real) and os.access(real, os.W_OK) and not any(root_plan._inside(u, real) for u in in_use)
    ]
    if not unused:
        pytest.skip("this Python knows no package folder it does not use (or none it may write to)")
    token = f"seqgrade-planted-{os.getpid()}-{secrets.token_hex(4)}.txt"
    planted = [os.path.join(f, token) for f in unused]
    probe = f"import os\nSEEN = [p for p in {planted + unused!r} if os.path.lexists(p)]\n"
    try:
        for path in planted:
            Path(path).write_text("the course's solutions\n")
            os.chmod(path, 0o644)
        session = Session(zygote, [(0, probe)], WALK_LIMITS).open()
        try:
            assert session.reports()[0]["status"] == "ok", session.reports()
            assert session.get("SEEN") == []
        finally:
            session.close()
    finally:
        for path in planted:
            Path(path).unlink(missing_ok=True)
    root = root_plan.plan_root()
    assert not any(root_plan._inside(f, b) for f in unused for b in root.binds)


def test_the_system_library_folder_shows_only_the_libraries_python_loads(zygote):
    """The folder of the system's libraries (libc's) is not bound whole: each library numpy, torch and Python's
    own extension modules load or may load later is bound alone (grader.jail.libraries), so modules nobody imported
    yet still load theirs (ssl, ctypes, lzma, sqlite3), while a course copy planted in that folder is not there."""
    folder = os.path.dirname(os.path.realpath(_libc_path()))
    if not os.access(folder, os.W_OK):
        pytest.skip(f"cannot write to {folder}")
    token = f"seqgrade-planted-{os.getpid()}-{secrets.token_hex(4)}"
    planted = [os.path.join(folder, token, "reference", "autoregressive.py"), os.path.join(folder, token + ".txt")]
    probe = f"""
import os
SEEN = [p for p in {planted!r} + [os.path.join({folder!r}, {token!r})] if os.path.lexists(p)]
LISTED = sorted(os.listdir({folder!r}))
import ssl, ctypes, lzma, bz2, sqlite3, hashlib
WORKS = [ssl.OPENSSL_VERSION[:7], ctypes.sizeof(ctypes.c_int), len(lzma.compress(b'x')) > 0,
         bz2.decompress(bz2.compress(b'ab')).decode(), sqlite3.connect(':memory:').execute('select 7').fetchone()[0],
         hashlib.sha256(b'').hexdigest()[:8]]
"""
    try:
        for path in planted:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            Path(path).write_text("the course's solutions\n")
        session = Session(zygote, [(0, probe)], WALK_LIMITS).open()
        try:
            assert session.reports()[0]["status"] == "ok", session.reports()
            assert session.get("SEEN") == []
            assert session.get("WORKS") == ["OpenSSL", 4, True, "ab", 7, "e3b0c442"]
            listed = session.get("LISTED")
        finally:
            session.close()
    finally:
        shutil.rmtree(os.path.join(folder, token), ignore_errors=True)
        Path(folder, token + ".txt").unlink(missing_ok=True)
    on_host = os.listdir(folder)
    assert "libc.so.6" in listed and len(listed) < len(on_host) / 2, (len(listed), len(on_host))


def _libc_path() -> str:
    """The C library this process has mapped."""
    with open("/proc/self/maps") as f:
        return next(line.split()[-1] for line in f if re.search(r"/libc(\.so|-[0-9.]+\.so)", line.split()[-1]))
