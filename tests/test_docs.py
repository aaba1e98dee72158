"""Every shell command shown in README.md and docs/ runs and succeeds.

Commands are the lines of ```sh blocks. They run in order, per file, with bash, in a scratch
workspace that has this repository's `.venv`, `Makefile` and sources linked in, a real `demo-out/`
made by the demo (what `make demo` runs after installing), and sample submissions.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.course.samples import make_samples

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# `make test` is this very suite (CI runs it through .ci/run); `make demo` = install + `seqgrade demo`,
# which the workspace fixture runs; `make screenshots` needs Chromium and is run when it is installed.
COVERED_ELSEWHERE = {"make test", "make demo"}


def commands(path: Path) -> list[str]:
    found = []
    for block in re.findall(r"```sh\n(.*?)```", path.read_text(), flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                found.append(line)
    return found


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, released):
    ws = tmp_path_factory.mktemp("docs-workspace")
    for name in (
        ".venv",
        "Makefile",
        "pyproject.toml",
        "constraints.txt",
        "assignments",
        "grader",
        "reference",
        "docs",
        "benchmarks",
    ):
        os.symlink(ROOT / name, ws / name)
    result = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "seqgrade"), "demo", "--out", "demo-out"],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    for assignment in ("sequence_models", "attention", "recursive_attention", "rnn_lm"):
        assert (ws / "demo-out" / assignment / "graded" / "grades.csv").is_file(), assignment
    samples = make_samples(released[1], ws / "submissions", count=3)
    shutil.copy(samples[0], ws / "submission.ipynb")
    return ws


def test_docs_show_commands():
    assert sum(len(commands(p)) for p in DOCS) >= 12


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_command_in_the_docs_succeeds(workspace, doc, stop_servers):
    for command in commands(doc):
        if command in COVERED_ELSEWHERE:
            continue
        if command == "make screenshots" and not (shutil.which("chromium") or shutil.which("chromium-browser")):
            continue
        result = subprocess.run(
            ["bash", "-c", command], cwd=workspace, capture_output=True, text=True, timeout=600, env=_env(workspace)
        )
        assert result.returncode == 0, (
            f"{doc.name}: `{command}` failed:\n{result.stdout[-1500:]}\n{result.stderr[-1500:]}"
        )


@pytest.fixture
def stop_servers(workspace):
    """A grading server a doc starts (`seqgrade serve --detach`) is stopped even when its doc fails midway."""
    yield
    subprocess.run(
        [str(ROOT / ".venv" / "bin" / "seqgrade"), "serve", "--stop"],
        cwd=workspace,
        env=_env(workspace),
        capture_output=True,
        timeout=120,
    )


def _env(workspace: Path) -> dict:
    (workspace / "shots").mkdir(exist_ok=True)
    return {
        **os.environ,
        "SCREENSHOT_DIR": str(workspace / "shots"),  # never rewrite the committed pictures
        "SEQGRADE_DEMO_GRADED": str(workspace / "demo-out" / "sequence_models" / "graded"),
        "SEQGRADE_SERVER": str(workspace / "server" / "grade.sock"),
    }


def test_the_per_cell_limit_is_the_one_the_code_uses():
    """The students' and the TAs' guides state one per-cell limit, the code's: Limits.cell_cpu_s of CPU time,
    or Limits.cell_timeout_s of waiting (issue 37: one said 10 s per cell, the other 30 s)."""
    from grader.jail.limits import Limits

    limits = Limits()
    for doc in ("students.md", "tas.md"):
        text = " ".join((ROOT / "docs" / doc).read_text().split())
        stated = re.findall(r"cell may use (\d+(?:\.\d+)?) s of CPU time[^.;]*?(\d+(?:\.\d+)?) s", text)
        assert stated == [(f"{limits.cell_cpu_s:g}", f"{limits.cell_timeout_s:g}")], (doc, stated)
        assert "s per cell" not in text and "cell may run" not in text, doc


def test_make_in_a_folder_of_links_installs_into_the_checkout(tmp_path):
    """The docs' `make ...` commands run in a workspace of links to this checkout: were the install out of date
    there, it must reinstall the checkout into its own .venv, never write the workspace's paths into it (a
    seqgrade script whose first line names a deleted workspace's Python)."""
    for name in ("Makefile", "pyproject.toml", "constraints.txt", ".venv"):
        os.symlink(ROOT / name, tmp_path / name)
    planned = subprocess.run(
        ["make", "--no-print-directory", "-n", "-W", str(ROOT / "pyproject.toml"), "install"],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")},  # as if typed
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"-e '{ROOT}[test]'" in planned and f"{ROOT}/.venv/bin/python -m pip" in planned
    assert str(tmp_path) not in planned
