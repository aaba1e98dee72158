"""The grading server (`seqgrade serve`): the same results as a cold `seqgrade grade`, and nobody but its
own user talks to it or poses as it."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from grader import server
from grader.errors import ServerError, UsageError
from grader.jail.limits import Limits
from grader.server import serving

from .grader.test_integrity_sandbox import notebook

WRONG_UNIT = "def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.tanh(h_prev @ Wrec.T + x @ Win.T)\n"


def _env(where: Path) -> dict:
    return {**os.environ, "SEQGRADE_SERVER": str(where)}


def _cli(args: list[str], where: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args], env=_env(where), capture_output=True, timeout=300
    )


@pytest.fixture
def at(monkeypatch, tmp_path):
    """A socket path of this test's own, in a private folder."""
    folder = tmp_path / "srv"
    folder.mkdir(mode=0o700)
    where = folder / "grade.sock"
    monkeypatch.setenv("SEQGRADE_SERVER", str(where))
    return where


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    """A real server, started as a user would (`seqgrade serve --detach`); stopped at the end."""
    folder = Path(tempfile.mkdtemp(prefix="seqgrade-test-server-"))  # 700, in a folder anyone may traverse
    where = folder / "grade.sock"
    started = _cli(["serve", "--detach", "--idle-exit", "600"], where)
    assert started.returncode == 0, started.stderr.decode()
    yield where
    _cli(["serve", "--stop"], where)
    shutil.rmtree(folder, ignore_errors=True)


def _notebook(released, tmp_path: Path, name: str, replace: dict[str, str]) -> Path:
    return notebook(tmp_path, json.loads(released[1].read_text()), name, replace)


def _graded(where: Path) -> int:
    found = _cli(["serve", "--status"], where).stdout.decode()
    return int(found.split(" notebook(s) graded")[0].rsplit(" ", 1)[1])


def test_the_server_grades_byte_identically_to_a_cold_run(running, released, tmp_path):
    notebooks = [
        _notebook(released, tmp_path, "solution", {}),
        _notebook(released, tmp_path, "wrong_unit", {"recurrent_unit": WRONG_UNIT}),
        _notebook(
            released,
            tmp_path,
            "hanging_forward",
            {"forward": "def forward(seqs, Wrec, Win, Wout):\n    while True:\n        pass\n"},
        ),
    ]
    before = _graded(running)
    for path in notebooks:
        warm = _cli(["grade", str(path), "--json", "--assignment", "sequence_models"], running)
        cold = _cli(["grade", str(path), "--json", "--assignment", "sequence_models", "--no-server"], running)
        assert warm.returncode == cold.returncode == 0, (warm.stderr, cold.stderr)
        assert warm.stderr == b"", warm.stderr  # no note: the server answered
        assert warm.stdout == cold.stdout, path.name
    # Other limits for one notebook: the same server (one zygote serves any limits), the same bytes as cold.
    tight = ["--call-cpu", "0.3", "--timeout", "100"]
    warm = _cli(["grade", str(notebooks[2]), "--json", *tight], running)
    cold = _cli(["grade", str(notebooks[2]), "--json", *tight, "--no-server"], running)
    assert warm.returncode == cold.returncode == 0 and warm.stderr == b"" and warm.stdout == cold.stdout
    assert b"after 0.3 s of CPU time" in warm.stdout  # the hanging forward met the limits of the request
    assert _graded(running) == before + len(notebooks) + 1  # the server graded them, not a silent fallback
    scores = [json.loads(_cli(["grade", str(p), "--json"], running).stdout)["score"] for p in notebooks]
    assert scores[0] > scores[1] and scores[0] > scores[2]


def test_the_server_refuses_a_client_of_other_code(running, monkeypatch):
    monkeypatch.setenv("SEQGRADE_SERVER", str(running))
    reply = server._ask(
        running,
        {
            "protocol": server.PROTOCOL,
            "op": "grade",
            "identity": "0" * 24,
            "notebook": "/x.ipynb",
            "assignment": None,
            "limits": {},
        },
        timeout=30,
    )
    assert reply == {"error": {"kind": "stale", "message": "this server runs other code"}}
    monkeypatch.setattr(server, "code_identity", lambda: "f" * 24)
    remote = server.grade_remotely(Path("/x.ipynb"), None, Limits())
    assert remote.result is None and "runs other code" in remote.note and "seqgrade serve --stop" in remote.note


def test_a_second_server_at_the_same_place_is_refused(running, monkeypatch):
    monkeypatch.setenv("SEQGRADE_SERVER", str(running))
    with pytest.raises(ServerError, match="already running"):
        serving.serve()


def test_usage_errors_found_by_the_server_are_the_clients_usage_errors(running, monkeypatch, released, tmp_path):
    monkeypatch.setenv("SEQGRADE_SERVER", str(running))
    anonymous = tmp_path / "unnamed.ipynb"  # no assignment in its metadata or its name
    nb = json.loads(released[1].read_text())
    nb["metadata"].pop("seqgrade", None)
    nb["metadata"].pop("nbgrader", None)
    anonymous.write_text(json.dumps(nb))
    with pytest.raises(UsageError, match="cannot tell which assignment"):
        server.grade_remotely(anonymous, None, Limits())
    got = _cli(["grade", str(anonymous)], running)
    assert got.returncode == 2 and b"cannot tell which assignment" in got.stderr


class FakeServer:
    """A socket that answers every connection with one canned line (or hangs up), counting connections."""

    def __init__(self, where: Path, reply: bytes | None):
        self.where, self.reply, self.connections = where, reply, 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(where))
        self.sock.listen(4)
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.makefile("rb").readline()
                if self.reply is not None:
                    conn.sendall(self.reply)

    def close(self):
        self.sock.close()


FORGED = json.dumps({"result": {"score": 25.0}}).encode() + b"\n"


@pytest.mark.parametrize("problem", ["open_to_others", "not_ours", "a_link"])
def test_the_client_does_not_believe_a_socket_others_could_have_put_there(problem, tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    folder = real
    if problem == "open_to_others":
        real.chmod(0o777)
    elif problem == "not_ours":
        if os.geteuid() != 0:
            pytest.skip("needs root to give the folder to another uid")
        os.chown(real, 60123, 60123)
    else:
        folder = tmp_path / "link"
        folder.symlink_to(real)
    fake = FakeServer(real / "grade.sock", FORGED)
    try:
        monkeypatch.setenv("SEQGRADE_SERVER", str(folder / "grade.sock"))
        assert server.grade_remotely(tmp_path / "x.ipynb", None, Limits()) == server.Remote(None)
        assert server.status() is None
        assert fake.connections == 0
    finally:
        fake.close()


def test_the_same_fake_server_in_a_private_folder_is_reached(at):
    """The control for the test above: the only difference is the folder."""
    fake = FakeServer(at, FORGED)
    try:
        assert server.grade_remotely(Path("/x.ipynb"), None, Limits()).result == {"score": 25.0}
        assert fake.connections == 1
    finally:
        fake.close()


def test_a_server_that_hangs_up_mid_request_means_grading_here_with_a_note(at, released):
    fake = FakeServer(at, None)
    try:
        remote = server.grade_remotely(released[1], None, Limits())
        assert remote.result is None and "did not answer" in remote.note and "graded here instead" in remote.note
        got = _cli(["grade", str(released[1]), "--json"], at)
        assert got.returncode == 0 and b"did not answer" in got.stderr
        assert json.loads(got.stdout)["status"] == "graded" and fake.connections == 2
    finally:
        fake.close()


def test_no_server_means_grading_here_without_a_note(at):
    assert server.grade_remotely(Path("/x.ipynb"), None, Limits()) == server.Remote(None)
    assert server.status() is None and not server.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another uid")
def test_a_connection_from_another_uid_gets_no_answer(running):
    folder = running.parent
    folder.chmod(0o711)
    running.chmod(0o666)
    read, write = os.pipe()
    try:
        pid = os.fork()
        if pid == 0:  # as another user: connect, ask for the status, report what came back
            try:
                os.close(read)
                os.setuid(60123)
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(20)
                s.connect(str(running))
                try:  # the server may hang up before, during or after this; what matters is what comes back
                    s.sendall(json.dumps({"protocol": server.PROTOCOL, "op": "status"}).encode() + b"\n")
                    answer = s.recv(1 << 16)
                except (BrokenPipeError, ConnectionResetError):
                    answer = b""
                os.write(write, b"connected:" + answer)
            except BaseException as exc:
                os.write(write, f"error:{exc}".encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as f:
            got = f.read()
        os.waitpid(pid, 0)
    finally:
        folder.chmod(0o700)
        running.chmod(0o600)
    assert got == b"connected:", got  # it reached the socket, and the server closed it without a word
    assert _graded(running) >= 0  # the server still answers its own user


def test_stop_and_idle_exit_remove_the_socket(tmp_path):
    folder = tmp_path / "srv"
    folder.mkdir(mode=0o700)
    where = folder / "grade.sock"
    assert _cli(["serve", "--detach", "--idle-exit", "600"], where).returncode == 0
    assert where.exists()
    stopped = _cli(["serve", "--stop"], where)
    assert stopped.returncode == 0 and b"grading server stopped" in stopped.stdout
    assert b"no grading server is running" in _cli(["serve", "--status"], where).stdout
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader.cli", "serve", "--idle-exit", "1"],
        env=_env(where),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and b"stopped after grading 0 notebook(s)" in err
    assert not where.exists()
