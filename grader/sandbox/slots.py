"""Slots: which uid a grading process's jails run as (seqgrade running as root gives each slot a uid of its own,
SANDBOX_UID + slot), handed out so that no two live grading processes on one machine share one.

Two processes that share a uid share its process limit (RLIMIT_NPROC counts every process of the uid), so a fork
bomb graded by one would make another's correct notebook fail to start a thread: a grade would depend on what
else the machine grades. A slot is claimed by locking a file of its own (``flock``), and the lock lasts as long
as the process that took it (the kernel drops it when the process ends, however it ends), so a slot is free again
the moment its process is gone, with nothing to clean up. Slots are looked for from the process id up, so a
machine's graders spread over the range rather than all racing for the first one.
"""

from __future__ import annotations

import fcntl
import os
import tempfile

from grader.errors import SandboxError

COUNT = 5000  # slots 0..COUNT-1, uids SANDBOX_UID..SANDBOX_UID + COUNT - 1

_held: dict[int, int] = {}  # slot -> the open file descriptor that holds its lock, for this process's lifetime


class NoFreeSlot(SandboxError):
    """Every slot is held by a live process (the grader's failure, never a student's)."""


def _folder() -> str:
    folder = os.path.join(tempfile.gettempdir(), f"seqgrade-slots-{os.geteuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def claim(start: int | None = None) -> int:
    """A slot no other live process holds, held by this one until it ends (or :func:`release`). The search
    begins at ``start`` (default: this process's id) and wraps around."""
    folder = _folder()
    first = (os.getpid() if start is None else start) % COUNT
    for step in range(COUNT):
        slot = (first + step) % COUNT
        if slot in _held:
            continue
        fd = os.open(os.path.join(folder, str(slot)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _held[slot] = fd
        return slot
    raise NoFreeSlot(f"all {COUNT} sandbox slots are held by live grading processes")


def release(slot: int) -> None:
    """Give back a slot this process claimed (a no-op for one it does not hold)."""
    fd = _held.pop(slot, None)
    if fd is not None:
        os.close(fd)
