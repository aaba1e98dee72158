"""Hostile student code in the sandbox gains nothing and harms nothing.

One zygote serves the whole module (as in a batch). Limits are short so hangs cost seconds.
"""

import os
import time
from pathlib import Path

import pytest

from grader.checking.calls import StudentTimeout
from grader.jail.limits import Limits
from grader.sandbox.client import Session

from .jail_session import LIMITS, run, sandbox_processes, score, zygote  # noqa: F401 (zygote: a fixture)
from .solutions import SOLUTION

WRONG_SEQ2COL = """
def seq2col(seq, filter_size):
    seq = np.asarray(seq)
    return np.stack([seq[i:i + filter_size] for i in range(len(seq) - filter_size)]), seq[:len(seq) - filter_size]
"""


def test_solution_passes_in_the_sandbox(zygote):
    session = run(zygote, SOLUTION)
    try:
        assert all(r.status == "passed" for r in score(session, "seq2col"))
        assert all(r.status == "passed" for r in score(session, "forward"))
    finally:
        session.close()


def test_student_code_runs_with_the_garbage_collector_on(zygote):
    """The zygote imports torch with the collector off (grader.collector) and must turn it back on."""
    session = run(zygote, "import gc\ndef collector():\n    return [gc.isenabled(), gc.collect() >= 0]\n")
    try:
        assert session.call("collector", []).value == [True, True]
    finally:
        session.close()


@pytest.mark.parametrize(
    "attack",
    [
        "np.allclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True\n"
        "import torch\ntorch.allclose = lambda *a, **k: True",
        "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.len = lambda x: 0",
        "print('{\"status\": \"graded\", \"score\": 27}')\nimport sys\nsys.stdout.write('SQG\\x01' + '\\x00' * 12)",
        "import torch.testing\ntorch.testing.assert_close = lambda *a, **k: None",
    ],
)
def test_patching_comparisons_in_the_student_process_changes_nothing(zygote, attack):
    session = run(zygote, SOLUTION, WRONG_SEQ2COL, attack)
    try:
        results = {r.name: r for r in score(session, "seq2col")}
        assert results["check_seq2col_windows"].status == "failed"
    finally:
        session.close()


def test_an_always_equal_object_is_not_a_correct_answer(zygote):
    evil = """
class Anything:
    def __eq__(self, other): return True
    def __array__(self, *a, **k): raise RuntimeError('no')
def seq2col(seq, filter_size):
    return Anything(), Anything()
CAUSAL_MASK_CHOICE = Anything()
"""
    session = run(zygote, SOLUTION, evil)
    try:
        assert sum(r.points for r in score(session, "seq2col")) <= 0.5  # only "leaves input unchanged" holds
        (choice,) = score(session, "CAUSAL_MASK_CHOICE")
        assert choice.status == "failed" and "Anything" in choice.message
    finally:
        session.close()


def test_ipython_input_transformer_cannot_rewrite_later_cells(zygote):
    evil = "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])"
    session = run(zygote, evil, SOLUTION)
    try:
        assert session.reports()[0]["status"] == "error"
        assert all(r.status == "passed" for r in score(session, "seq2col"))
    finally:
        session.close()


@pytest.mark.parametrize(
    "cell, status",
    [
        ("import sys\nsys.exit(0)", "error"),
        ("import os\nos._exit(0)", "error"),
        ("while True:\n    pass", "timeout"),
        ("import time\ntime.sleep(10**6)", "timeout"),
        # its parent is the jail's init, which ignores signals from inside; killpg(0) kills only the cell's own process
        ("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos.killpg(0, signal.SIGKILL)", "error"),
        ("def f(n):\n    return f(n + 1)\nf(0)", "error"),
    ],
)
def test_a_cell_that_exits_hangs_or_kills_is_recorded_and_later_cells_still_run(zygote, cell, status):
    start = time.monotonic()
    session = run(zygote, cell, SOLUTION)
    try:
        assert session.reports()[0]["status"] == status, session.reports()
        assert all(r.status == "passed" for r in score(session, "causal_mask"))
    finally:
        session.close()
    assert time.monotonic() - start < 20
    assert zygote.proc.poll() is None  # the zygote survived
    time.sleep(0.2)
    assert sandbox_processes(zygote) == []


def test_a_function_that_hangs_costs_one_timeout_and_only_its_own_points(zygote):
    session = run(zygote, SOLUTION, "def forward(seqs, Wrec, Win, Wout):\n    while True:\n        pass")
    try:
        start = time.monotonic()
        results = score(session, "forward")
        assert {r.status for r in results} == {"timeout"}
        assert time.monotonic() - start < 2 * LIMITS.call_timeout_s + 5
        assert all(r.status == "passed" for r in score(session, "recurrent_unit"))
    finally:
        session.close()


BURN = """
import time
def burn(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return seconds
def spin():
    while True:
        pass
"""


def test_a_call_is_stopped_at_its_functions_declared_cpu_budget_not_the_default(zygote):
    default = run(zygote, BURN)
    declared = Session(zygote, [(0, BURN)], LIMITS, budgets={"burn": 1.5}).open()
    try:
        with pytest.raises(StudentTimeout, match=f"after {LIMITS.call_cpu_s:g} s of CPU"):
            default.call("burn", [0.4])
        assert declared.call("burn", [0.4]).value == 0.4  # 0.4 s of CPU: over the default, within its own
        with pytest.raises(StudentTimeout, match="after 1.5 s of CPU"):
            declared.call("burn", [3.0])
    finally:
        default.close()
        declared.close()


WAITS = """
import threading, time
def sleeps(seconds):
    time.sleep(seconds)
    return seconds
def naps(seconds):
    time.sleep(seconds)
    return seconds
def deadlocks():
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()
def waits_for_a_worker(seconds):
    done = []
    def work():
        start = time.process_time()
        while time.process_time() - start < seconds:
            pass
        done.append(seconds)
    t = threading.Thread(target=work)
    t.start()
    t.join()
    return done[0]
"""


def test_a_call_that_waits_without_computing_is_stopped_long_before_the_wall_clock_backstop(zygote):
    limits = Limits(call_cpu_s=2, call_idle_s=0.3, call_timeout_s=60, submission_timeout_s=120)
    session = Session(zygote, [(0, WAITS)], limits).open()
    try:
        for name, args in (("sleeps", [10**6]), ("deadlocks", [])):
            start = time.monotonic()
            with pytest.raises(StudentTimeout, match="after waiting 0.3 s without computing"):
                session.call(name, args)
            assert time.monotonic() - start < 30  # the 60 s backstop did not stop it
        # Waiting briefly, or for a thread that computes, is not idleness (whatever the machine's load).
        assert session.call("naps", [0.05]).value == 0.05
        assert session.call("waits_for_a_worker", [0.6]).value == 0.6
    finally:
        session.close()


def test_budgets_are_at_least_the_default_and_at_most_the_notebooks_time():
    limits = Limits(call_cpu_s=0.1, submission_timeout_s=5)
    assert limits.call_budget(None) == 0.1
    assert limits.call_budget(0.01) == 0.1  # a declared budget never lowers --call-cpu
    assert limits.call_budget(0.25) == 0.25
    assert limits.call_budget(60) == 5


def test_restarts_after_hangs_use_a_jail_built_ahead_and_closing_leaves_nothing(zygote):
    session = run(zygote, SOLUTION, BURN + "\ndef other():\n    while True:\n        pass\n")
    try:
        with pytest.raises(StudentTimeout):
            session.call("spin", [])
        assert session._spare is None  # built only once the notebook has hung or crashed
        with pytest.raises(StudentTimeout):
            session.call("other", [])  # its restart built one ahead
        assert session._spare is not None
        spare = session._spare
        assert all(r.status == "passed" for r in score(session, "causal_mask"))  # runs in the spare
        assert session._spare is not spare and session._spare is not None
        assert session.restarts == 3
    finally:
        session.close()
    time.sleep(0.3)
    assert sandbox_processes(zygote) == []


def test_memory_bomb_is_stopped(zygote):
    bomb = "def seq2col(seq, filter_size):\n    x = []\n    while True:\n        x.append(bytearray(50 * 2**20))"
    session = run(zygote, SOLUTION, bomb)
    try:
        results = score(session, "seq2col")
        assert all(r.points == 0 for r in results)
        assert all(r.status in ("error", "timeout", "failed") for r in results)
        assert all(r.status == "passed" for r in score(session, "causal_mask"))
    finally:
        session.close()


def test_fork_bomb_is_contained(zygote):
    bomb = "import os\nfor _ in range(10000):\n    try:\n        os.fork()\n    except OSError:\n        break"
    session = run(zygote, bomb, SOLUTION)
    try:
        assert all(r.status == "passed" for r in score(session, "causal_mask"))
    finally:
        session.close()
    time.sleep(0.5)
    assert sandbox_processes(zygote) == []


def test_threads_left_running_die_with_the_session(zygote):
    code = "import threading, time\nthreading.Thread(target=lambda: time.sleep(10**6), daemon=False).start()"
    session = run(zygote, code, SOLUTION)
    session.close()
    time.sleep(0.3)
    assert sandbox_processes(zygote) == []


def test_threads_left_running_do_not_slow_later_calls(zygote):
    """Busy threads from a cell are gone before the checks start, so timing cannot depend on them."""
    spin = (
        "import threading\ndef spin():\n    while True:\n        pass\n"
        "for _ in range(4):\n    threading.Thread(target=spin).start()"
    )
    session = run(zygote, spin, SOLUTION + "\nimport threading\nTHREADS = lambda: threading.active_count()")
    try:
        assert session.call("THREADS", []).value == 1
        assert all(r.status == "passed" for r in score(session, "forward"))
    finally:
        session.close()


def test_an_oversized_allocation_fails_with_memory_error_every_time(zygote):
    big = "def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.zeros(2**28, dtype=torch.float64)"
    for _ in range(2):
        session = run(zygote, SOLUTION, big)
        try:
            (first, *_) = score(session, "recurrent_unit")
            assert first.status == "error" and "allocate memory" in first.message, first.message
        finally:
            session.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox makes cgroups only when seqgrade runs as root")
def test_a_jails_cgroups_are_removed_by_its_monitor_when_it_ends(zygote):
    """The monitor leaves and removes the jail's cgroups itself before it exits, although the jail's init has made
    the jail's root the root of the mount namespace the two share (no /sys/fs/cgroup there): nothing is left for
    the next jail."""
    from grader.jail import isolation
    from grader.sandbox.ending import await_ended

    parents = [d for d in (isolation.current_cgroup_dir(c) for c in ("memory", "pids")) if d is not None]
    if not parents:
        pytest.skip("no writable cgroup v1 hierarchy here")
    before = {parent: set(os.listdir(parent)) for parent in parents}
    session = run(zygote, "X = 1")
    made = {parent: {n for n in os.listdir(parent) if n.startswith("seqgrade-")} - before[parent] for parent in parents}
    assert all(made.values()), made  # the running jail's own
    session.close()
    await_ended(zygote)  # the jail has ended; its monitor then removes the cgroups and exits
    monitors = {int(name.removeprefix("seqgrade-")) for names in made.values() for name in names}
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{pid}") for pid in monitors) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(made[parent] & set(os.listdir(parent)) for parent in parents), made


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox makes cgroups only when seqgrade runs as root")
def test_cgroups_left_by_a_monitor_that_died_are_removed_by_the_next_session(zygote):
    import subprocess

    from grader.jail import isolation

    parent = isolation.current_cgroup_dir("pids")
    if parent is None:
        pytest.skip("no writable cgroup v1 pids hierarchy here")
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale, other = Path(parent, f"seqgrade-{gone.pid}"), Path(parent, "seqgrade-not-a-monitor")
    stale.mkdir()
    other.mkdir()
    try:
        run(zygote, "X = 1").close()
        assert not stale.exists()
        assert other.exists()  # only seqgrade-<pid> cgroups of processes that are gone are ever removed
    finally:
        for d in (stale, other):
            if d.exists():
                d.rmdir()
