"""The jail's walls: what student code cannot see, write or reach (files, the network, other users).

One zygote serves the whole module (as in a batch). Limits are short so hangs cost seconds.
"""
import os
import socket
import threading
from pathlib import Path

from grader.sandbox.client import PROJECT_ROOT, Session, Zygote

from .jail_session import LIMITS, SLOT, run, score, zygote  # noqa: F401 (zygote: a fixture)
from .solutions import SOLUTION


def test_reference_grader_and_other_files_are_hidden(zygote, tmp_path):
    secret = tmp_path / "other_student.ipynb"
    secret.write_text("secret")
    probe = f"""
import os
RESULTS = []
for path in {[os.path.join(PROJECT_ROOT, 'reference', 'answers.py'), os.path.join(PROJECT_ROOT, 'grader', 'registry.py'), str(secret), '/root/.bashrc']!r}:
    try:
        RESULTS.append(open(path).read()[:20])
    except OSError as exc:
        RESULTS.append(type(exc).__name__)
try:
    import reference
    RESULTS.append('imported reference')
except ImportError:
    RESULTS.append('ImportError')
"""
    session = run(zygote, probe)
    try:
        got = session.get("RESULTS")
        assert got[:4] == ["FileNotFoundError"] * 4, got
        assert got[4] == "ImportError"
    finally:
        session.close()


def test_writes_outside_the_scratch_directory_fail(zygote, tmp_path):
    targets = [os.path.join(PROJECT_ROOT, "README.md"), "/etc/seqgrade-pwned", str(tmp_path / "x"), "/var/tmp/x"]
    probe = f"""
import os
RESULTS = []
for path in {targets!r}:
    try:
        with open(path, 'a') as f:
            f.write('pwned')
        RESULTS.append('wrote')
    except OSError as exc:
        RESULTS.append(type(exc).__name__)
with open('scratch.txt', 'w') as f:
    f.write('ok')
RESULTS.append(open('scratch.txt').read())
"""
    before = Path(PROJECT_ROOT, "README.md").read_bytes() if Path(PROJECT_ROOT, "README.md").exists() else None
    session = run(zygote, probe)
    try:
        got = session.get("RESULTS")
        assert "wrote" not in got[:4], got
        assert got[4] == "ok"
    finally:
        session.close()
    assert not Path("/etc/seqgrade-pwned").exists() and not (tmp_path / "x").exists()
    if before is not None:
        assert Path(PROJECT_ROOT, "README.md").read_bytes() == before


def test_no_network_connection_leaves_the_sandbox(zygote):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    accepted = []

    def accept():
        try:
            accepted.append(server.accept())
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    probe = f"""
import socket
try:
    socket.create_connection(('127.0.0.1', {port}), timeout=1)
    RESULT = 'connected'
except OSError as exc:
    RESULT = type(exc).__name__
"""
    session = run(zygote, probe)
    try:
        assert session.get("RESULT") != "connected"
    finally:
        session.close()
        thread.join()
        server.close()
    assert accepted == []


def test_the_sandbox_runs_as_an_unprivileged_user(zygote):
    session = run(zygote, "import os\nIDS = [os.getuid(), os.geteuid()]\nCWD = os.getcwd()")
    try:
        ids = session.get("IDS")
        if os.geteuid() == 0:
            assert ids == [60000 + SLOT] * 2
        assert session.get("CWD") == "/tmp/scratch"
    finally:
        session.close()


def test_the_unprivileged_user_namespace_path_isolates_too(tmp_path):
    """What a TA's laptop gets (no root): a user namespace with every capability dropped."""
    with Zygote(slot=SLOT + 1, rootless=True) as z:
        probe = f"""
import os, socket
RESULTS = []
for path in {[os.path.join(PROJECT_ROOT, 'reference', 'answers.py')]!r}:
    try:
        open(path).read()
        RESULTS.append('read')
    except OSError as exc:
        RESULTS.append(type(exc).__name__)
for path in {[os.path.join(PROJECT_ROOT, 'README.md'), '/etc/pwned']!r}:
    try:
        open(path, 'a').write('x')
        RESULTS.append('wrote')
    except OSError as exc:
        RESULTS.append(type(exc).__name__)
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    RESULTS.append('remounted' if libc.mount(None, b'/', None, 32 | 4096, None) == 0 else 'mount refused')
except Exception as exc:
    RESULTS.append(type(exc).__name__)
try:
    socket.create_connection(('127.0.0.1', 22), timeout=1)
    RESULTS.append('connected')
except OSError:
    RESULTS.append('no network')
"""
        readme = Path(PROJECT_ROOT, "README.md")
        before = readme.read_bytes() if readme.exists() else None
        session = Session(z, [(0, probe), (1, SOLUTION)], LIMITS).open()
        try:
            got = session.get("RESULTS")
            assert got[0] == "FileNotFoundError"
            assert "wrote" not in got[1:3], got
            assert (readme.read_bytes() if readme.exists() else None) == before
            assert got[3] == "mount refused"
            assert got[4] == "no network"
            assert all(r.status == "passed" for r in score(session, "causal_mask"))
        finally:
            session.close()


