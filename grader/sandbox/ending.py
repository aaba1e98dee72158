"""Jails killed and perhaps not gone yet: the next jail of the same zygote waits for them before it runs cells."""

from __future__ import annotations

import socket
import time
import weakref

from .jails import Zygote

JAIL_END_WAIT_S = 15.0  # how long a killed jail may take to be gone (its monitor's own sweep is bounded by 10 s)
# Jails killed and perhaps not gone yet, per zygote (every jail of a zygote runs as its uid): their monitors' sockets.
ENDING: "weakref.WeakKeyDictionary[Zygote, list[socket.socket]]" = weakref.WeakKeyDictionary()


def await_ended(zygote: Zygote) -> None:
    """Wait until every jail of ``zygote`` that was killed is gone. A monitor exits only after every process
    of its jail has been reaped, and the next jail runs as the same uid, whose processes the kernel counts
    (RLIMIT_NPROC) across the machine: a jail killed while it held its whole allowance (a fork bomb) must not
    take part of the next one's. Done just before the next jail runs its cells, so the kernel's work (25-35 ms
    on a loaded machine) overlaps the new jail's set-up, and grading the next notebook is not held up."""
    for ctl in ENDING.pop(zygote, []):
        until_closed(ctl, JAIL_END_WAIT_S)
        ctl.close()


def until_closed(ctl: socket.socket, timeout: float) -> None:
    """Read what the monitor still sends until it closes its end (it has exited), or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        ctl.settimeout(left)
        try:
            if not ctl.recv(4096):
                return
        except OSError:  # socket.timeout included: give up waiting, the next jail starts anyway
            return
