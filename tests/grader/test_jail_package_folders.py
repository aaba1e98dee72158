"""The jail leaves out the package folders Python does not use (grader.jail.filesystem.unused_package_folders): the
base interpreter's site-packages under a virtual environment sits in folders the jail needs (the standard
library's, libpython's), which are then bound entry by entry without it."""

import os
import secrets
import site
import sys
from pathlib import Path

import pytest

from grader.jail import filesystem
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
        if os.path.isdir(real) and os.access(real, os.W_OK) and not any(filesystem._inside(u, real) for u in in_use)
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
    root = filesystem.plan_root()
    assert not any(filesystem._inside(f, b) for f in unused for b in root.binds)
