"""seqgrade grades from an ordinary install: a wheel built from this tree (what `pip install .` builds and installs),
installed without -e into a fresh virtual environment, grades the demo's notebooks byte for byte as this checkout's
editable install does, and its jail shows none of seqgrade's files but the jail's own package.

The fresh environment gets seqgrade from the wheel alone; its dependencies (torch and the rest, the same versions)
come from this suite's environment through a path entry, as installing torch again would take minutes. That entry
is a plain folder on sys.path: the editable install's finder there is never run, so `import grader` finds the wheel's.
"""

import importlib.util
import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

DEMO = """
import io, sys
from pathlib import Path
from rich.console import Console
import grader
from grader.course.demo import demo_assignment
demo_assignment(sys.argv[2], Path(sys.argv[1]), Console(file=io.StringIO()))
print(grader.__file__)
"""

# Run in the wheel's jail: walk the whole tree for any file of seqgrade's packages or course (named as the wheel's
# RECORD names them, under any folder: OWN), and try to import them.
WALK = r"""
import os
FOUND, FILES, SEEN_JAIL = [], 0, False
for folder, dirs, files in os.walk('/'):
    if folder in ('/proc', '/dev', '/sys'):
        dirs[:] = []
        continue
    FILES += len(files)
    SEEN_JAIL = SEEN_JAIL or (folder.endswith('/grader/jail') and 'zygote.py' in files)
    for name in files:
        parts = os.path.join(folder, name).split('/')
        FOUND += ['/'.join(parts) for k in range(2, 6) if '/'.join(parts[-k:]) in OWN]
for name in ('reference', 'assignments', 'grader.checking', 'grader.course', 'grader.assignments'):
    try:
        __import__(name)
        FOUND.append('imported ' + name)
    except ImportError:
        pass
"""

PROBE = """
import json, sys
from grader.jail.limits import Limits
from grader.sandbox.client import Session, Zygote
with Zygote() as zygote:
    session = Session(zygote, [(0, sys.argv[1])], Limits(call_timeout_s=3, cell_cpu_s=60, cell_timeout_s=60,
                                                         submission_timeout_s=180)).open()
    try:
        print(json.dumps({"reports": session.reports(), "found": session.get("FOUND"),
                          "files": session.get("FILES"), "seen_jail": session.get("SEEN_JAIL")}))
    finally:
        session.close()
"""


def _tree(dest: Path) -> None:
    """This checkout's files as git knows them (tracked, and new files not ignored), without its build outputs."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)


@pytest.fixture(scope="module")
def wheel_python(tmp_path_factory):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("builds the wheel from the files git lists: needs a git checkout")
    tmp = tmp_path_factory.mktemp("wheel-install")
    _tree(tmp / "src")
    # Without build isolation where setuptools is here already (no index needed); else pip fetches the backend.
    isolation = ["--no-build-isolation"] if importlib.util.find_spec("setuptools") else []
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run([*pip, "wheel", "--no-deps", *isolation, "-w", tmp / "dist", tmp / "src"], check=True)
    (wheel,) = (tmp / "dist").glob("seqgrade-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", tmp / "venv"], check=True)
    python = tmp / "venv" / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    Path(purelib, "zz-dependencies.pth").write_text("".join(p + "\n" for p in ours))
    subprocess.run([*pip, "--python", python, "install", "--no-deps", "--no-index", wheel], check=True)
    return python


def _graded(out: Path) -> dict[str, bytes]:
    """Every file the batch wrote, but the gradebook (an SQLite file that records when it was written)."""
    return {
        str(p.relative_to(out / "graded")): p.read_bytes()
        for p in sorted((out / "graded").rglob("*"))
        if p.is_file() and p.name != "gradebook.db"
    }


def test_a_wheel_install_grades_the_demo_as_the_editable_install_does(wheel_python, tmp_path):
    """One assignment's demo (its eight samples: correct, partly wrong, hostile, invalid) graded by each install
    (all five assignments' demos were compared by hand on 2026-12-02: the same results but one measured memory
    peak, which two runs of one install also read differently and which is now reported to two digits)."""
    assignment, runs = "sequence_models", {}
    for name, python in (("wheel", wheel_python), ("editable", sys.executable)):
        done = subprocess.run(
            [python, "-c", DEMO, tmp_path / name, assignment], cwd=tmp_path, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-3000:]
        runs[name] = (done.stdout.strip(), _graded(tmp_path / name))
    assert runs["wheel"][0].startswith(str(wheel_python.parents[2])), runs["wheel"][0]  # the wheel's grader
    assert runs["editable"][0] == str(ROOT / "grader" / "__init__.py")
    wheel, editable = runs["wheel"][1], runs["editable"][1]
    assert sorted(wheel) == sorted(editable) and any(n.startswith("results/") for n in wheel)
    assert [n for n in wheel if wheel[n] != editable[n]] == []
    statuses = {json.loads(wheel[n])["status"] for n in wheel if n.startswith("results/")}
    assert "graded" in statuses, statuses


def test_the_wheel_installs_jail_holds_nothing_of_seqgrade_but_the_jail(wheel_python, tmp_path):
    """The wheel put grader/, reference/ and the course (assignments/) into site-packages, beside the packages the
    jail must show: that folder is bound entry by entry without them (from the wheel's RECORD), so a walk of the
    whole jail finds none of their files and none of them imports; grader/jail is there, and so is the rest."""
    (wheel,) = (wheel_python.parents[2] / "dist").glob("seqgrade-*.whl")
    with zipfile.ZipFile(wheel) as z:
        record = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))).decode()
    own = {line.split(",")[0] for line in record.splitlines()} - {"grader/__init__.py"}
    # (An __init__.py of theirs is named like one of torch's, torch/ao/nn/quantized/reference/__init__.py.)
    own = {n for n in own if "/" in n and not n.startswith("grader/jail/") and ".dist-info/" not in n}
    own = {n for n in own if not n.endswith("/__init__.py")}
    assert {"reference/autoregressive.py", "assignments/course.json", "grader/checking/templates.py"} <= own
    probe = f"OWN = {sorted(own)!r}\n" + WALK
    done = subprocess.run([wheel_python, "-c", PROBE, probe], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert [r["status"] for r in got["reports"]] == ["ok"], got["reports"]
    assert got["found"] == [], got["found"]
    assert got["seen_jail"] and got["files"] > 1000, got  # the walk did see the jail's package and Python's files


def test_the_gradescope_zip_asks_for_a_checkout_when_installed(wheel_python, tmp_path):
    """The Gradescope zip packs the source tree and constraints.txt, which an install has not: a clear error."""
    done = subprocess.run(
        [wheel_python.parent / "seqgrade", "gradescope-autograder", "sequence_models", "--out", tmp_path / "a.zip"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "build the zip from a checkout of seqgrade" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_the_jail_names_the_distribution_pyproject_declares():
    """The jail (which may import nothing of grader but grader.jail) reads seqgrade's RECORD by the name
    pyproject.toml gives the distribution: the two names are one."""
    tomllib = pytest.importorskip("tomllib")
    from grader.jail import root_plan

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    assert root_plan.DISTRIBUTION == declared
