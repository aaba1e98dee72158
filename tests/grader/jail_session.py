"""Jails for the tests of the sandbox: one zygote for a test module (as in a batch), a session on it, and
:func:`open_session` for a test that needs a zygote of its own (another limit, the rootless path).

Every zygote here takes its slot (the uid its jails run as, as root) from grader.sandbox.slots, which gives
each live process slots no other holds: tests running side by side (pytest-xdist's workers, a batch another
test starts) never share a uid, so none counts another's processes against its own limit. No test names a slot.
"""

import contextlib
import os

import pytest

from grader.assignments.registry import SEQUENCE_MODELS
from grader.jail.limits import Limits
from grader.judge import judge_exercise
from grader.sandbox.client import SANDBOX_UID, Session, Zygote

LIMITS = Limits(call_timeout_s=3, cell_cpu_s=2, cell_timeout_s=3, submission_timeout_s=60)


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    z = Zygote(hide=[str(tmp_path_factory.getbasetemp())])
    z.wait_ready()
    yield z
    z.close()


@contextlib.contextmanager
def open_session(cells, limits: Limits = Limits(), **zygote_options):
    """A session on a zygote of its own (``zygote_options``: ``rootless``, ``hide``), opened on ``cells`` (a list
    of sources, or of (index, source) pairs); both are closed when the block ends, however it ends."""
    numbered = [c if isinstance(c, tuple) else (i, c) for i, c in enumerate(cells)]
    with Zygote(**zygote_options) as zygote:
        session = Session(zygote, numbered, limits)
        try:
            session.open()
            yield session
        finally:
            session.close()


def run(zygote, *sources, limits=LIMITS):
    session = Session(zygote, [(i, s) for i, s in enumerate(sources)], limits).open()
    return session


def score(session, exercise_id):
    return list(judge_exercise(SEQUENCE_MODELS.exercise(exercise_id), session).checks)


def sandbox_uid(zygote) -> int:
    """The uid ``zygote``'s jails run as when the tests run as root."""
    return SANDBOX_UID + zygote.slot


def sandbox_processes(zygote) -> list[str]:
    """The live processes of ``zygote``'s sandbox uid."""
    uid = sandbox_uid(zygote)
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                found.append(pid)
        except FileNotFoundError:
            pass
    return found
