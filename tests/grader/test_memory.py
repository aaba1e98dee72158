"""A call's peak memory, measured by the grader from outside the sandbox (Reply.peak_bytes)."""

import os

import pytest

from grader.jail.limits import Limits
from grader.sandbox import procfs
from grader.sandbox.inprocess import InProcess
from tests.grader.jail_session import open_session

MiB = 2**20
CELLS = [
    (
        0,
        """
import torch
def whole(n):  # an n x n matrix and its exponential: 2 * 4 n^2 bytes
    s = torch.randn(n, n)
    return float((s.exp() @ torch.ones(n)).sum())
def blocks(n):  # 128 rows at a time
    return sum(float(torch.randn(128, n).exp().sum()) for _ in range(0, n, 128))
def whole_then_reset(n):  # tries to hide its peak by resetting its own high-water mark
    out = whole(n)
    try:
        with open('/proc/self/clear_refs', 'w') as f:
            f.write('5')
    except OSError:
        pass
    return out
""",
    )
]


def _peaks(student):
    return {
        name: student.call(name, [4096], measure_memory=True).peak_bytes / MiB
        for name in ("whole", "blocks", "whole_then_reset")
    }


@pytest.mark.parametrize("rootless", [False, True], ids=["root", "user-namespace"])
def test_the_sandbox_measures_a_calls_peak_memory_from_outside(rootless):
    if not rootless and os.geteuid() != 0:
        pytest.skip("the root path needs root")
    with open_session(CELLS, Limits(), rootless=rootless) as session:
        peaks = _peaks(session)
    assert peaks["whole"] >= 100 and peaks["blocks"] < 32, peaks
    # As root the jail's own memory cgroup records the peak, out of the student's reach; without root the
    # grader also samples the tree's resident memory while it waits, which catches this reset too.
    assert peaks["whole_then_reset"] >= 64, peaks


def _field(text: str, name: str) -> int | None:
    line = next((line for line in text.splitlines() if line.startswith(name + ":")), None)
    return None if line is None else int(line.split()[1])


def test_a_jail_has_no_transparent_huge_pages():
    """Every process of a jail runs without transparent huge pages (read from /proc, outside the jail). numpy
    asks for them for a large array; with them, a huge page a call only reads counts 2 MiB as touched, and how
    long an array takes to make depends on the machine's free memory (whether a hoarding loop ran out of
    memory or of CPU time changed between runs)."""
    cells = [
        (
            0,
            "import numpy as np\nkept = np.ones(2**23)  # 64 MiB: numpy asks for huge pages\n"
            "def touch(step):\n    return float(kept[::step].sum())\n",
        )
    ]
    with open_session(cells, Limits()) as session:
        session.call("touch", [4096])
        pids = procfs.tree_pids(session.pgid)
        status = [open(f"/proc/{pid}/status").read() for pid in pids]
        rollups = [open(f"/proc/{pid}/smaps_rollup").read() for pid in pids]
    if any(_field(text, "THP_enabled") is None for text in status):
        pytest.skip("this kernel does not say whether a process may have transparent huge pages")
    assert pids and all(_field(text, "THP_enabled") == 0 for text in status)
    assert all(_field(text, "AnonHugePages") == 0 for text in rollups)


def test_in_process_calls_measure_this_process():
    student, _ = InProcess.from_cells(CELLS)
    reply = student.call("whole", [2048], measure_memory=True)
    assert reply.peak_bytes is not None and reply.peak_bytes >= 24 * MiB
    assert student.call("whole", [2048]).peak_bytes is None  # only when asked
