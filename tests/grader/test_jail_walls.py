"""The jail's walls: what student code cannot see, write or reach (files, the network, other users).

One zygote serves the whole module (as in a batch). Limits are short so hangs cost seconds.
"""

import os
import secrets
import shutil
import socket
import sys
import sysconfig
import threading
from pathlib import Path

import pytest

from grader.jail import filesystem, root_plan
from grader.jail.limits import Limits
from grader.sandbox.client import PROJECT_ROOT, Session, Zygote

from .jail_session import LIMITS, run, sandbox_uid, score, zygote  # noqa: F401 (zygote: a fixture)
from .solutions import SOLUTION


def test_reference_grader_and_other_files_are_hidden(zygote, tmp_path):
    secret = tmp_path / "other_student.ipynb"
    secret.write_text("secret")
    hidden = [
        os.path.join(PROJECT_ROOT, "reference", "answers.py"),
        os.path.join(PROJECT_ROOT, "grader", "registry.py"),
        str(secret),
        "/root/.bashrc",
    ]
    probe = f"""
import os
RESULTS = []
for path in {hidden!r}:
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


# Places the jail's root binds from the machine: the jail's own package and the installed packages (a .pth
# file there would run in every later Python, the grader's too). Read-only mounts keep them; as root the
# sandbox uid's lack of permission does too, so only the user-namespace path shows the mounts at work.
PLANTED = [
    os.path.join(PROJECT_ROOT, "grader", "jail", "seqgrade_pwned.py"),
    os.path.join(sysconfig.get_path("purelib"), "seqgrade-pwned.pth"),
]


def _remove_planted() -> list[str]:
    left = [p for p in PLANTED if os.path.exists(p)]
    for p in left:
        os.remove(p)
    return left


def test_writes_outside_the_scratch_directory_fail(zygote, tmp_path):
    targets = [
        os.path.join(PROJECT_ROOT, "README.md"),
        "/etc/seqgrade-pwned",
        str(tmp_path / "x"),
        "/var/tmp/x",
        *PLANTED,
    ]
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
        assert "wrote" not in got[:-1], got
        assert got[-1] == "ok"
    finally:
        session.close()
        left = _remove_planted()
    assert left == []
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
            assert ids == [sandbox_uid(zygote)] * 2
        assert session.get("CWD") == "/tmp/scratch"
    finally:
        session.close()


def test_the_unprivileged_user_namespace_path_isolates_too(tmp_path):
    """What a TA's laptop gets (no root): a user namespace with every capability dropped."""
    with Zygote(rootless=True) as z:
        probe = f"""
import os, socket
RESULTS = []
for path in {[os.path.join(PROJECT_ROOT, "reference", "answers.py")]!r}:
    try:
        open(path).read()
        RESULTS.append('read')
    except OSError as exc:
        RESULTS.append(type(exc).__name__)
for path in {[os.path.join(PROJECT_ROOT, "README.md"), "/etc/pwned", *PLANTED]!r}:
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
            assert "wrote" not in got[1:-2], got
            assert (readme.read_bytes() if readme.exists() else None) == before
            assert got[-2] == "mount refused"
            assert got[-1] == "no network"
            assert all(r.status == "passed" for r in score(session, "causal_mask"))
        finally:
            session.close()
            left = _remove_planted()
        assert left == []


# A notebook that looks for a copy of the course anywhere on the machine: first at the places it was put,
# then by walking the whole tree (as the notebook of issue 35 did, which ran any reference it found).
FIND_THE_COURSE = """
import os
TRIED = []
for path in {paths!r}:
    try:
        TRIED.append(open(path).read()[:20])
    except OSError as exc:
        TRIED.append(type(exc).__name__)
FOUND = []
for folder, dirs, files in os.walk('/'):
    if folder == '/proc':
        dirs[:] = []
    FOUND += [os.path.join(folder, n) for n in dirs + files if {token!r} in n]
"""
WALK_LIMITS = Limits(call_timeout_s=3, cell_cpu_s=30, cell_timeout_s=60, submission_timeout_s=120)
PLACES = ("/opt", "/var/tmp", "/usr/local/src", "/srv")


@pytest.fixture
def course_copies(released):
    """World-readable copies of reference/ and of the solution notebook in four places outside the checkout."""
    token = f"seqgrade-course-copy-{os.getpid()}-{secrets.token_hex(4)}"
    made, paths = [], []
    try:
        for place in PLACES:
            if not os.path.isdir(place):
                os.makedirs(place, mode=0o755)
                made.append(place)
            copy = Path(place, token)
            made.append(str(copy))
            shutil.copytree(
                Path(PROJECT_ROOT, "reference"), copy / "reference", ignore=shutil.ignore_patterns("__pycache__")
            )
            shutil.copy(released[1], copy / "solution.ipynb")
            for p in [copy, *copy.rglob("*")]:
                p.chmod(0o755 if p.is_dir() else 0o644)
            paths += [str(copy / "reference" / "autoregressive.py"), str(copy / "solution.ipynb")]
        yield token, paths
    finally:
        for path in reversed(made):
            shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="copies the course into /opt, /var/tmp, /usr/local/src and /srv")
def test_a_copy_of_the_course_elsewhere_on_the_machine_is_invisible(zygote, course_copies):
    token, paths = course_copies
    probe = FIND_THE_COURSE.format(paths=paths, token=token)
    with Zygote(rootless=True) as rootless:
        for z in (zygote, rootless):
            session = Session(z, [(0, probe)], WALK_LIMITS).open()
            try:
                assert session.reports()[0]["status"] == "ok", session.reports()
                assert session.get("TRIED") == ["FileNotFoundError"] * len(paths)
                assert session.get("FOUND") == []
            finally:
                session.close()


def test_the_jail_holds_python_and_nothing_else(zygote):
    """numpy, torch and modules nobody loaded yet (they are read from disk, some dlopen a library) work;
    of the checkout only the virtual environment and the jail's own package are there; the machine's
    configuration, home folders and other places are not."""
    works = """
import sys
FRESH = [m for m in ('decimal', 'fractions', 'statistics', 'sqlite3', 'sympy') if m not in sys.modules]
import decimal, fractions, statistics, sqlite3
import numpy as np, torch, torch.nn.functional as F
import selfcheck
selfcheck.check_everything(globals())
WORKS = [str(decimal.Decimal(1) / 8), str(fractions.Fraction(3, 6)), statistics.median([3, 1, 2]),
         sqlite3.connect(':memory:').execute('select 2 + 3').fetchone()[0], \
round(float(np.linalg.det(np.eye(3) * 2)), 6),
         (torch.ones(2, 3) @ torch.ones(3, 4)).tolist(), F.softmax(torch.zeros(2), dim=-1).tolist(),
         list(torch.broadcast_shapes((2, 1), (1, 3)))]
"""
    sees = f"""
import os
project = {PROJECT_ROOT!r}
def listing(folder):
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []
SEEN = {{'project': listing(project), 'grader': listing(os.path.join(project, 'grader'))}}
HIDDEN = [p for p in [os.path.join(project, p) for p in ('reference', 'tests', 'assignments', 'grader/checking',
                                                           'grader/sandbox', 'grader/assignments')]
          + ['/etc/passwd', '/etc/shadow', '/etc/hostname', '/etc/hosts', '/home', '/opt', '/srv', '/var', '/mnt',
             '/media', '/run', '/boot', '/root/.bashrc', '/usr/local/src']
          if os.path.lexists(p)]
try:
    import grader.checking
    HIDDEN.append('imported grader.checking')
except ImportError:
    pass
"""
    session = Session(zygote, [(0, works), (1, sees)], WALK_LIMITS, modules=["selfcheck"]).open()
    try:
        assert [r["status"] for r in session.reports()] == ["ok", "ok"], session.reports()
        assert session.get("FRESH") == ["decimal", "fractions", "statistics", "sqlite3", "sympy"]
        assert session.get("WORKS") == ["0.125", "1/2", 2, 5, 8.0, [[3.0] * 4] * 2, [0.5, 0.5], [2, 3]]
        assert session.get("HIDDEN") == []
        seen = session.get("SEEN")
        assert set(seen["project"]) <= {".venv", "grader"} and set(seen["grader"]) <= {"__init__.py", "jail"}, seen
    finally:
        session.close()


def test_the_rlimits_level_says_what_it_cannot_hide(released, monkeypatch, capsys):
    """`seqgrade grade` and `seqgrade batch` say in one plain line that --isolation rlimits hides no file."""
    from grader import cli
    from grader.batch import run as batch_run
    from grader.cli import grade
    from grader.errors import SeqgradeError
    from grader.results import NotebookResult

    monkeypatch.setattr(
        grade, "_grade_here", lambda args, limits, path: NotebookResult("sequence_models", str(path), "graded")
    )
    for isolation, said in (("namespaces", False), ("rlimits", True)):
        assert cli.main(["grade", str(released[1]), "--no-server", "--json", "--isolation", isolation]) == 0
        err = capsys.readouterr().err
        assert ("hides no file" in err and "can use the network" in err) == said, err
        assert len(err.strip().splitlines()) == said

    def refuse(*args, **kwargs):
        raise SeqgradeError("stopped before grading")

    monkeypatch.setattr(batch_run, "run_batch", refuse)
    assert (
        cli.main(
            [
                "batch",
                str(released[1].parent),
                "--assignment",
                "sequence_models",
                "--out",
                str(released[1].parent.parent / "out"),
                "--isolation",
                "rlimits",
            ]
        )
        == 1
    )
    assert "hides no file" in capsys.readouterr().err


def test_a_python_whose_packages_hold_seqgrade_gets_no_jail(tmp_path):
    """Copied into site-packages by hand (no installed distribution lists its files), the grader sits beside the
    packages the jail must show: the root is refused with the reason, when a jail is built (the rlimits level needs
    none). Installed by pip, its files are left out instead (tests/test_wheel_install.py)."""
    import subprocess

    python = str(tmp_path / "venv" / "bin" / "python")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    packages = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    shutil.copytree(
        Path(PROJECT_ROOT, "grader", "jail"),
        Path(packages, "grader", "jail"),
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copy(Path(PROJECT_ROOT, "grader", "__init__.py"), Path(packages, "grader", "__init__.py"))
    said = subprocess.run(
        [python, "-c", "from grader.jail import root_plan; print(root_plan.plan_root().refused)"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout
    assert f"{os.path.realpath(packages)} holds both Python's packages and seqgrade's" in said
    assert "Install seqgrade with pip" in said
    with pytest.raises(root_plan.JailSetupError, match="holds both"):
        filesystem.build_root(root_plan.Root((), (), refused=said.strip()), [], 1, (0, 0))
    assert root_plan.plan_root().refused == ""  # this checkout's own Python: a root can be built
