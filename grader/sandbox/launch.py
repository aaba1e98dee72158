"""Start a zygote process using the standard library only, so a caller can start it before importing
torch itself and the two imports overlap (``seqgrade grade`` on one notebook gains about 3 s)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys


def clean_env() -> dict:
    """The zygote's environment: none of the TA's variables (tokens, paths), one thread per pool."""
    env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in os.environ}
    env.update(
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MALLOC_ARENA_MAX="2",
        PYTHONHASHSEED="0",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
    )
    return env


def launch_zygote(shared: bool = False) -> tuple[subprocess.Popen, socket.socket]:
    """The zygote process and our end of its control socket. ``shared``: several processes will ask this
    zygote for jails through copies of our end (a batch's workers), so each request must stay one message
    (a SOCK_SEQPACKET socket: a message is read whole or not at all, whoever sent it)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET if shared else socket.SOCK_STREAM)
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader.jail.zygote", str(theirs.fileno())],
        pass_fds=(theirs.fileno(),),
        env=clean_env(),
        cwd="/",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    theirs.close()
    return proc, ours
