"""``--isolation rlimits``: the explicit fallback for machines without namespaces.

No filesystem or network jail, but verdicts stay outside, resource limits and timeouts hold, and no
student process outlives its session. The rootless path is what an ordinary user on such a machine
gets; as root seqgrade refuses the mode when the sandbox uid could not read Python.
"""

import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from grader.assignments.registry import SEQUENCE_MODELS
from grader.grading import Grader
from grader.jail import codec, isolation
from grader.jail.limits import Limits
from grader.judge import judge_exercise
from grader.sandbox import client, jails, procfs
from grader.sandbox.client import Session, Zygote

from .solutions import SOLUTION

LIMITS = Limits(isolation="rlimits", call_timeout_s=3, cell_cpu_s=2, cell_timeout_s=3, submission_timeout_s=60)
FULL = {e.id: e.points for e in SEQUENCE_MODELS.exercises if e.kind != "manual"}

# A cell that leaves a process behind which escapes the jail's process group (new session, double fork).
DAEMON = """
import os, time
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(w, str(os.getpid()).encode())
        time.sleep(10**6)
    os._exit(0)
os.wait()
DAEMON_PID = int(os.read(r, 32))
"""


@pytest.fixture(scope="module")
def zygote():
    z = Zygote(rootless=True)
    z.wait_ready()
    yield z
    z.close()


def _start_time(pid: int) -> str | None:
    try:
        return procfs.stat_fields(f"/proc/{pid}/stat")[19]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def test_the_solution_gets_full_marks_in_rlimits_mode(released):
    with Grader(LIMITS, rootless=True) as grader:
        result = grader.grade(released[1])
    assert result.status == "graded"
    assert {e.id: e.score for e in result.exercises if e.id in FULL} == FULL


def test_no_student_process_or_file_outlives_its_session(zygote):
    session = Session(
        zygote, [(0, DAEMON), (1, "import os\nSCRATCH = os.getcwd()\nopen('notes.txt', 'w').write('x')")], LIMITS
    ).open()
    pid, scratch = session.get("DAEMON_PID"), Path(session.get("SCRATCH"))
    assert (scratch / "notes.txt").exists()
    started = _start_time(pid)
    assert started is not None  # the daemon really runs outside the jail's process group
    assert os.getpgid(pid) != session.pgid
    session.close()
    deadline = time.monotonic() + 10
    while _start_time(pid) == started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _start_time(pid) != started, "the student's daemon survived the session"
    while scratch.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not scratch.exists(), "the session's scratch folder was left behind"


def test_killing_its_parent_and_group_only_costs_the_student_that_cell(zygote):
    attack = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos.killpg(0, signal.SIGKILL)"
    session = Session(zygote, [(0, attack), (1, SOLUTION)], LIMITS).open()
    try:
        checks = judge_exercise(SEQUENCE_MODELS.exercise("causal_mask"), session).checks
        assert all(r.status == "passed" for r in checks), checks
        assert session.reports()[0]["status"] == "error"
    finally:
        session.close()


def test_a_request_the_sandbox_cannot_read_gets_an_answer_not_an_exit(zygote):
    session = Session(zygote, [(0, "def double(x):\n    return x * 2")], LIMITS).open()
    try:
        # The argument refers to an array the (empty) payload does not hold: the codec refuses the frame.
        header = b'{"op":"call","name":"double","values":{"args":{"t":"list","items":[{"t":"ndarray","a":"a0"}]}}}'
        session.channel.sock.sendall(codec.MAGIC + len(header).to_bytes(4, "little") + bytes(8) + header)
        reply, _ = session.channel.recv(time.monotonic() + 5)
        assert reply["ok"] is False and "could not read the grader's request" in reply["error"]["message"]
        assert session.call("double", [np.arange(3)]).value.tolist() == [0, 2, 4]
    finally:
        session.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid switch happens only when seqgrade runs as root")
def test_as_root_the_mode_is_refused_when_the_sandbox_user_cannot_read_python(released, monkeypatch, capsys):
    from grader.cli import main

    locked = Path(tempfile.mkdtemp(prefix="seqgrade-test-")) / "locked"  # pytest's temp root is closed to others
    try:
        (locked / "python").mkdir(parents=True)
        locked.parent.chmod(0o755)
        locked.chmod(0o700)
        monkeypatch.setattr(jails, "_keep_paths", lambda: [str(locked / "python")])
        assert main(["grade", str(released[1]), "--isolation", "rlimits"]) == 3
        err = capsys.readouterr().err
        assert str(locked) in err and "uid 60000" in err and len(err.strip().splitlines()) == 1
        locked.chmod(0o755)
        assert procfs.unreadable_for(client.SANDBOX_UID, [str(locked / "python")]) is None
    finally:
        shutil.rmtree(locked.parent)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a process as another uid")
def test_the_process_limit_counts_what_the_user_already_runs():
    """tasks_of counts threads too (RLIMIT_NPROC does): a process of a fresh uid with 3 extra threads is 4."""
    uid = 2**31 - 7
    assert isolation.tasks_of(uid) == 0
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            import threading

            os.setresuid(uid, uid, uid)
            for _ in range(3):
                threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
            os.write(w, b"x")
            time.sleep(30)
        finally:
            os._exit(0)
    try:
        os.read(r, 1)
        assert isolation.tasks_of(uid) == 4
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
