"""End to end as an ordinary user: release, grade and a small batch through the user-namespace sandbox.

Run as root (CI), the commands run as the unprivileged uid 65534 from a Python that uid can read: ours
when it can, else the system's Python of the same version (same ABI) in a fresh virtual environment whose
site-packages points at this environment's packages. Run as an ordinary user, they run as that user.
Where neither is possible the test says why and skips.
"""

import json
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.assignments.registry import get_assignment

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534
ASSIGNMENT = "recursive_attention"  # its memory checks also measure from outside without root


def _as_user(command: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run ``command`` as the ordinary user. One that does not end in time is stopped with SIGABRT, so that
    each of its Python processes prints where every thread stood (faulthandler), and the test fails with it."""
    env = {
        "HOME": str(cwd),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "CI": os.environ.get("CI", ""),
        "PYTHONFAULTHANDLER": "1",
    }
    extra = {"user": NOBODY, "group": NOBODY, "extra_groups": []} if os.geteuid() == 0 else {}
    with subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **extra,
    ) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGABRT)
            try:
                out, err = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                out, err = process.communicate()
            pytest.fail(
                f"{' '.join(map(str, command[1:]))} did not end within {timeout} s; it printed:\n"
                f"{out[-3000:]}\n{err[-12000:]}"
            )
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def _readable_python(work: Path) -> str:
    """A Python the unprivileged user can run with this project's packages importable, or skip saying why."""
    probe = ["-c", "import grader.assignments.registry, torch, nbgrader"]
    if os.geteuid() != 0:
        return sys.executable
    try:
        if _as_user([sys.executable, *probe], work).returncode == 0:
            return sys.executable
    except PermissionError:  # the interpreter itself lies where that uid cannot go (a Python under /root)
        pass
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system.exists():
        pytest.skip(f"{sys.executable} is not readable by uid {NOBODY} and there is no {system} of the same version")
    venv = work / "venv"
    subprocess.run([str(system), "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    packages = next(Path(p) for p in site.getsitepackages() if Path(p).is_dir())
    found = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import site; print(site.getsitepackages()[0])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(found, "seqgrade-packages.pth").write_text(f"import site; site.addsitedir({str(packages)!r})\n")
    _give_to_nobody(work)
    python = str(venv / "bin" / "python")
    result = _as_user([python, *probe], work)
    if result.returncode != 0:
        pytest.skip(f"uid {NOBODY} cannot import seqgrade from {packages}: {result.stderr.strip()[-300:]}")
    return python


def _give_to_nobody(path: Path) -> None:
    if os.geteuid() == 0:
        for p in [path, *path.rglob("*")]:
            os.chown(p, NOBODY, NOBODY, follow_symlinks=False)


@pytest.fixture(scope="module")
def work():
    folder = Path(tempfile.mkdtemp(prefix="seqgrade-nonroot-", dir="/tmp"))
    folder.chmod(0o755)
    _give_to_nobody(folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_release_grade_and_batch_as_an_ordinary_user(work):
    python = _readable_python(work)
    seqgrade = [python, "-m", "grader.cli"]
    for version, extra in (("student", []), ("solution", ["--solutions"])):
        result = _as_user([*seqgrade, "release", ASSIGNMENT, "--out", str(work / version), *extra], work)
        assert result.returncode == 0, result.stderr[-2000:]
    notebook = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
    declared = get_assignment(ASSIGNMENT)
    # the solution earns every automatic point, the bonus exercise's too; the manual ones wait for staff
    auto = sum(e.points for e in declared.exercises if e.kind != "manual")

    result = _as_user([*seqgrade, "grade", str(work / "solution" / notebook), "--json"], work)
    assert result.returncode == 0, result.stderr[-2000:]
    graded = json.loads(result.stdout)
    assert graded["status"] == "graded" and graded["score"] == auto, graded
    memory = [c for e in graded["exercises"] for c in e["checks"] if c["name"].endswith("_memory")]
    assert memory and all(c["status"] == "passed" for c in memory), memory  # measured from outside, no root

    submissions = work / "submissions"
    submissions.mkdir()
    shutil.copy(work / "solution" / notebook, submissions / "alice.ipynb")
    shutil.copy(work / "student" / notebook, submissions / "bob.ipynb")
    _give_to_nobody(submissions)
    result = _as_user(
        [
            *seqgrade,
            "batch",
            str(submissions),
            "--assignment",
            ASSIGNMENT,
            "--out",
            str(work / "graded"),
            "--workers",
            "1",
        ],
        work,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    rows = (work / "graded" / "grades.csv").read_text().splitlines()
    totals = {line.split(",")[0]: float(line.split(",")[1]) for line in rows[1:]}
    assert totals == {"alice": auto, "bob": 0.0}, rows
    if os.geteuid() == 0:
        assert (work / "graded" / "grades.csv").stat().st_uid == NOBODY  # written by the ordinary user
