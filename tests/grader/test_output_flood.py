"""A jail starts, and keeps its whole process allowance, whatever the jail before it left (issue 35, item 6).

What ended the hostile ``gigabyte_of_output`` notebook's jail "between cells" in a loaded corpus run was not
its output but the notebook graded just before it on the same batch worker, ``fork_bomb``, whose jail ran as
the same uid and was still being torn down. The kernel counts RLIMIT_NPROC per uid across the whole machine;
the next jail's init forked its worker as that uid, the fork failed with EAGAIN, and the init exited 0
without a worker: the grader saw the socket close before the first cell ("ended unexpectedly ... status 0"),
or, when it lost the race earlier, a BrokenPipeError escaped from grading altogether. Built the same way, a
jail built ahead for a restart died beside a jail that held its uid's allowance.

Both tests fail on the code before the fix (1f9fd34): there, in 20 rounds of a full jail and the next one,
the next one failed to start 11 and 12 times (idle, and under CpuLoad), and the jail built ahead never
started. With the zygote's change alone (the worker forked before privileges are dropped) the first test
still fails: the next jail starts, but forks 0 of its 8 children in some rounds.
"""

import pytest

from grader.checking.calls import StudentAborted, StudentTimeout
from grader.jail.limits import Limits
from grader.sandbox.client import Session, Zygote

from ..corpus.build import load
from ..corpus.cpuload import CpuLoad

LIMITS = Limits(call_timeout_s=3, cell_cpu_s=2, cell_timeout_s=10, submission_timeout_s=60)
ROUNDS = 10

# Forks until the jail's process limit refuses, and leaves every child asleep: the uid's allowance is full.
FILL = """
import os, time
for _ in range(100):
    try:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
    except OSError:
        break
"""
# The corpus notebook's flood, smaller (64 MiB printed, 64 MiB written to fd 1), then eight processes
# alive at once, well within the jail's own allowance of 32.
GIGABYTE = next(e for e in load("hostile") if e.name == "gigabyte_of_output").data["ATTACK_CELLS"][0]
FLOOD = GIGABYTE.replace("range(1024)", "range(64)")
FORK_EIGHT = """
import os, time
forked = 0
for _ in range(8):
    try:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
    except OSError:
        break
    forked += 1

def children():
    return forked
"""


@pytest.fixture(scope="module")
def zygote():
    with Zygote() as z:  # a uid of its own (grader.sandbox.slots): no other test's jail counts towards it
        z.wait_ready()
        yield z


def _after_a_full_jail(zygote) -> tuple:
    """Grade a jail that fills its uid's allowance and close it, then grade the flood: what the grader saw."""
    seen = []
    for cells, ask in (([(0, FILL)], None), ([(0, FLOOD), (1, FORK_EIGHT)], "children")):
        session = Session(zygote, cells, LIMITS)
        try:
            session.open()
            seen.append((tuple(r["status"] for r in session.reports()), session.call(ask, []).value if ask else None))
        except (
            StudentAborted,
            Exception,
        ) as exc:  # before the fix: StudentCrashed ("ended unexpectedly"), BrokenPipeError
            seen.append((type(exc).__name__, str(exc)[:200]))
        finally:
            session.close()
    return tuple(seen)


def test_a_jail_after_one_that_filled_its_uids_process_allowance_runs_the_same_every_time(zygote):
    """Graded again and again under CPU load, right after a jail of the same uid that left 30 processes
    behind, the flood's jail runs both cells and forks its eight children every time."""
    assert FLOOD.count("range(64)") == 2, "the corpus notebook's flood changed: make its smaller copy again"
    busy = CpuLoad(seconds=120)
    try:
        seen = [_after_a_full_jail(zygote) for _ in range(ROUNDS)]
    finally:
        busy.close()
    assert seen == [((("ok",), None), (("ok", "ok"), 8))] * ROUNDS, seen


def test_the_jail_built_ahead_starts_beside_one_that_holds_its_uids_process_allowance(zygote):
    """After a restart the next jail is built ahead, while the current one (same uid) holds its whole
    process allowance; when it takes over it runs the cells and answers."""
    cells = [
        FILL,
        "def hang_first():\n    while True:\n        pass\n",
        "def hang_second():\n    while True:\n        pass\n",
        "def one():\n    return 1\n",
    ]
    session = Session(zygote, list(enumerate(cells)), LIMITS).open()
    try:
        for name in ("hang_first", "hang_second"):  # the second runs in a restarted jail, which builds the spare
            with pytest.raises(StudentTimeout):
                session.call(name, [])
        assert session.call("one", []).value == 1  # answered by the jail built ahead
        assert session.restarts == 3
    finally:
        session.close()
