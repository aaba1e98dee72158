"""The Gradescope autograder zip: its layout, and its run_autograder on a fake /autograder tree.

run_autograder runs from the unpacked zip, with this environment's Python found on PATH in place of the
one setup.sh would install (setup.sh itself needs the network and is not run here). Scores are compared
with what `seqgrade grade` (the same Grader, default limits) gives the same notebook.
"""

import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat
import pytest

from grader.assignments.registry import get_assignment
from grader.cli import main
from grader.course.samples import make_samples
from grader.errors import UsageError
from grader.gradescope.autograder_zip import build_autograder
from grader.gradescope.config import AutograderConfig
from grader.gradescope.container import NoSubmission, find_notebook, pick_isolation
from grader.grading import Grader
from grader.sandbox.client import SANDBOX_UID
from grader.sandbox.procfs import unreadable_for

ASSIGNMENT = "sequence_models"
VENV_BIN = str(Path(sys.executable).parent)
TEST_KEYS = {"name", "number", "score", "max_score", "status", "output"}


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory):
    return build_autograder(ASSIGNMENT, tmp_path_factory.mktemp("zip") / "autograder.zip")


@pytest.fixture(scope="module")
def notebooks(released, tmp_path_factory):
    """The solution, a partly wrong notebook, and a file named .ipynb that is not a notebook."""
    folder = tmp_path_factory.mktemp("notebooks")
    correct, wrong = make_samples(released[1], folder, count=2)
    junk = folder / "junk.ipynb"
    junk.write_text("this is a PDF export renamed to .ipynb, not a notebook\n")
    return {"correct": correct, "wrong": wrong, "junk": junk}


@pytest.fixture(scope="module")
def expected(notebooks):
    """What `seqgrade grade` gives each notebook (one sandboxed Grader with the default limits)."""
    with Grader() as grader:
        return {k: grader.grade(p, ASSIGNMENT) for k, p in notebooks.items()}


def _unpack(zip_path: Path, root: Path) -> None:
    """Unpack like Gradescope: into root/source, keeping the modes the zip records."""
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            target = root / "source" / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
            target.chmod((info.external_attr >> 16) & 0o777)


def _run(
    zip_path: Path | None, root: Path, submission: dict[str, bytes], **env
) -> tuple[dict, subprocess.CompletedProcess]:
    if zip_path is not None:  # None: already unpacked
        _unpack(zip_path, root)
    (root / "submission").mkdir(parents=True)
    for name, data in submission.items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_bytes(data)
    run_env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "SEQGRADE_AUTOGRADER_ROOT": str(root), **env}
    proc = subprocess.run(
        [str(root / "source" / "run_autograder")], cwd=root, env=run_env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads((root / "results" / "results.json").read_text()), proc


def _assert_shape(data: dict) -> None:
    assert isinstance(data["score"], (int, float)) and isinstance(data["output"], str) and data["output"]
    assert isinstance(data["tests"], list)
    for t in data["tests"]:
        assert TEST_KEYS <= set(t), t
        assert t["status"] in ("passed", "failed") and 0 <= t["score"] <= t["max_score"], t


def test_zip_layout(autograder_zip, tmp_path):
    with zipfile.ZipFile(autograder_zip) as zf:
        names = set(zf.namelist())
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in zf.infolist()}
        config = AutograderConfig.from_json(zf.read("seqgrade.json").decode())
        setup = zf.read("setup.sh").decode()
        requirements = zf.read("requirements.txt").decode()
    assert {"setup.sh", "run_autograder", "seqgrade.json", "constraints.txt", "requirements.txt"} <= names
    assert {
        "seqgrade/grader/cli/__init__.py",
        "seqgrade/grader/gradescope/container.py",
        "seqgrade/reference/__init__.py",
    } <= names
    assert not [
        n for n in names if "__pycache__" in n or n.endswith(".pyc") or n.startswith(("tests/", "assignments/"))
    ]
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755
    assert config.assignment == ASSIGNMENT and config.visibility == "visible"
    # torch's CPU build, from its own index, before anything else; never a bare `pip install torch`.
    assert "--index-url https://download.pytorch.org/whl/cpu" in setup and "torch==" in setup
    assert "torch" not in requirements.split() and "numpy" in requirements
    assert '-c "$HERE/constraints.txt"' in setup
    _unpack(autograder_zip, tmp_path / "unpacked")
    for script in ("setup.sh", "run_autograder"):  # both parse as bash (setup.sh needs the network to run)
        check = subprocess.run(
            ["bash", "-n", str(tmp_path / "unpacked" / "source" / script)], capture_output=True, text=True
        )
        assert check.returncode == 0, check.stderr
    # The same checkout gives the same bytes.
    again = build_autograder(ASSIGNMENT, tmp_path / "again.zip")
    assert again.read_bytes() == autograder_zip.read_bytes()


@pytest.mark.parametrize("kind", ["correct", "wrong", "junk"])
def test_run_autograder_scores_like_seqgrade_grade(autograder_zip, notebooks, expected, kind, tmp_path):
    name = "my submission.ipynb" if kind != "junk" else "sequence_models.ipynb"  # any file name is found
    data, proc = _run(autograder_zip, tmp_path / "autograder", {name: notebooks[kind].read_bytes()})
    _assert_shape(data)
    assert isinstance(data["execution_time"], int) and data["visibility"] == "visible"
    result = expected[kind]
    assert data["score"] == result.score, (kind, data["output"], proc.stdout[-2000:])
    assignment = get_assignment(ASSIGNMENT)
    auto = [(e, c) for e in result.exercises for c in e.checks if c.status != "manual"]
    graded_tests = [t for t in data["tests"] if t["max_score"] > 0]
    assert [t["score"] for t in graded_tests] == [c.points for _, c in auto]
    assert [t["output"] for t in graded_tests if t["status"] == "failed"] == [
        c.message for _, c in auto if c.points < c.max_points
    ]
    # Each test is named by its exercise and the check's property sentence from the registry.
    sentences = {
        (e.id, c.name): chk.property
        for e in result.exercises
        for c in e.checks
        for chk in (assignment.exercise(e.id).checks)
        if chk.name == c.name
    }
    assert [t["name"] for t in graded_tests] == [f"{e.id}: {sentences[e.id, c.name]}" for e, c in auto]
    manual = [t for t in data["tests"] if t["max_score"] == 0]
    assert len(manual) == sum(1 for e in assignment.exercises if e.kind == "manual")
    assert all("Pending manual grading" in t["output"] for t in manual)
    assert data["extra_data"]["seqgrade"]["status"] == result.status
    if kind == "correct":
        assert data["score"] == result.gradable_points > 0 and "automatically graded" in data["output"]
    elif kind == "wrong":
        assert 0 < data["score"] < result.gradable_points
        assert any(t["status"] == "failed" for t in graded_tests)
    else:
        assert data["score"] == 0 and result.status == "invalid" and result.reason in data["output"]


@pytest.mark.parametrize(
    "files, said",
    [
        ({"answers.pdf": b"%PDF-1.4\n"}, "holds no Jupyter notebook"),
        ({"a.ipynb": b"{}", "b/c.ipynb": b"{}"}, "holds 2 notebooks"),
        ({}, "holds no Jupyter notebook"),
    ],
)
def test_no_single_notebook_gives_score_zero_with_the_reason(autograder_zip, tmp_path, files, said):
    data, _ = _run(autograder_zip, tmp_path / "autograder", files)
    _assert_shape(data)
    assert data["score"] == 0 and data["tests"] == [] and said in data["output"]


def test_a_fault_of_the_grader_still_writes_results(autograder_zip, notebooks, tmp_path):
    root = tmp_path / "autograder"
    _unpack(autograder_zip, root)
    config = root / "source" / "seqgrade.json"
    config.write_text(config.read_text().replace('"version": 1', '"version": 99'))  # a zip from another seqgrade
    data, proc = _run(None, root, {"x.ipynb": notebooks["correct"].read_bytes()})
    _assert_shape(data)
    assert data["score"] == 0 and "the autograder itself failed" in data["output"]
    assert "version 99" in data["output"] and "Traceback" not in data["output"]
    assert "Traceback" in proc.stdout  # the log, which only course staff see, keeps the details


def test_an_unknown_isolation_level_is_refused():
    with pytest.raises(UsageError, match="SEQGRADE_ISOLATION must be one of namespaces, rlimits; got 'none'"):
        pick_isolation("none")


def test_a_python_that_cannot_start_still_writes_results(autograder_zip, notebooks, tmp_path):
    data, _ = _run(
        autograder_zip,
        tmp_path / "autograder",
        {"x.ipynb": notebooks["correct"].read_bytes()},
        SEQGRADE_PYTHON=shutil.which("false"),
    )
    _assert_shape(data)
    assert data["score"] == 0 and "could not start" in data["output"]


def _python_the_sandbox_uid_can_read(work: Path) -> str:
    """This environment's Python, or the system's Python of the same version with this environment's
    packages when ours lies where uid 60000 cannot read it (as setup.sh avoids by installing into /opt)."""
    if not unreadable_for(SANDBOX_UID, [sys.base_prefix, sys.prefix]):
        return sys.executable
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system.exists():
        pytest.skip(f"uid {SANDBOX_UID} cannot read {sys.base_prefix} and there is no {system} of the same version")
    subprocess.run([str(system), "-m", "venv", "--without-pip", str(work / "venv")], check=True, capture_output=True)
    python = work / "venv" / "bin" / "python"
    found = subprocess.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"], check=True, capture_output=True, text=True
    ).stdout.strip()
    packages = next(p for p in site.getsitepackages() if Path(p).is_dir())
    Path(found, "seqgrade-packages.pth").write_text(f"import site; site.addsitedir({packages!r})\n")
    return str(python)


@pytest.mark.skipif(os.geteuid() != 0, reason="Gradescope runs run_autograder as root; this reproduces that")
def test_rlimits_as_root_like_gradescope(autograder_zip, notebooks, expected):
    """Without namespaces (as in Gradescope's container) the student's uid can neither read seqgrade's
    source (checks, reference) nor forge results.json, and the score is the same."""
    work = Path(tempfile.mkdtemp(prefix="seqgrade-gradescope-", dir="/tmp"))
    try:
        work.chmod(0o755)  # every folder above the fake /autograder can be entered by any user
        marker = work / "marker"
        marker.mkdir(mode=0o777)
        marker.chmod(0o777)
        root = work / "autograder"
        nb = nbformat.read(notebooks["correct"], as_version=4)
        nb.cells.append(
            nbformat.v4.new_code_cell(f"""
import json as _json
_seen = {{}}
for _what, _path, _mode in (("read", {str(root / "source" / "seqgrade" / "reference" / "__init__.py")!r}, "r"),
                            ("forge", {str(root / "results" / "results.json")!r}, "w")):
    try:
        with open(_path, _mode) as _f:
            _f.write('{{"score": 1000, "tests": []}}') if _mode == "w" else _f.read()
        _seen[_what] = "allowed"
    except OSError as _exc:
        _seen[_what] = type(_exc).__name__
with open({str(marker / "seen.json")!r}, "w") as _f:
    _json.dump(_seen, _f)
""")
        )
        data, proc = _run(
            autograder_zip,
            root,
            {"hw.ipynb": nbformat.writes(nb).encode()},
            SEQGRADE_ISOLATION="rlimits",
            SEQGRADE_PYTHON=_python_the_sandbox_uid_can_read(work),
        )
        _assert_shape(data)
        assert data["extra_data"]["seqgrade"]["isolation"] == "rlimits", proc.stdout[-2000:]
        assert data["score"] == expected["correct"].score, (data["output"], proc.stdout[-2000:])
        seen = json.loads((marker / "seen.json").read_text())  # the hostile cell did run, as uid 60000
        assert seen == {"read": "PermissionError", "forge": "PermissionError"}, seen
        # Denied because run_autograder closed the source folder, not because the way there was shut.
        assert unreadable_for(SANDBOX_UID, [root / "submission"]) is None
        assert unreadable_for(SANDBOX_UID, [root / "source" / "seqgrade"]) == str(root / "source")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_find_notebook_skips_checkpoints(tmp_path):
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "hw-checkpoint.ipynb").write_text("{}")
    (tmp_path / "hw.ipynb").write_text("{}")
    (tmp_path / "link.ipynb").symlink_to("/etc/passwd")  # a link is never read as the notebook
    assert find_notebook(tmp_path) == tmp_path / "hw.ipynb"
    (tmp_path / "hw.ipynb").unlink()
    with pytest.raises(NoSubmission, match="no Jupyter notebook"):
        find_notebook(tmp_path)


def test_cli_builds_the_zip_and_rejects_bad_input(tmp_path, capsys):
    out = tmp_path / "deploy" / "ag.zip"
    assert main(["gradescope-autograder", ASSIGNMENT, "--out", str(out), "--visibility", "after_published"]) == 0
    with zipfile.ZipFile(out) as zf:
        assert AutograderConfig.from_json(zf.read("seqgrade.json").decode()).visibility == "after_published"
    started = sys.modules.pop("grader.gradescope.autograder_zip", None)
    assert main(["gradescope-autograder", "no_such_assignment", "--out", str(tmp_path / "x.zip")]) == 2
    assert "grader.gradescope.autograder_zip" not in sys.modules  # refused before the slow imports
    if started is not None:
        sys.modules["grader.gradescope.autograder_zip"] = started
    assert "unknown assignment 'no_such_assignment'" in capsys.readouterr().err
    assert not (tmp_path / "x.zip").exists()
    assert main(["gradescope-autograder", ASSIGNMENT, "--visibility", "sometimes"]) == 2
    assert main(["gradescope-autograder", ASSIGNMENT, "--out", "/proc/no/such/ag.zip"]) == 2
    assert "cannot write to /proc/no/such/ag.zip" in capsys.readouterr().err
