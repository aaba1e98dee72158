"""docs/authoring-exercises.md, executed: its blocks are applied, in order, to a scratch copy of the course,
and then the assignment's tests run on the result, so a step the guide leaves out (or gets wrong) fails here.

The guide's convention (stated at its top): ```python file=PATH``` is a new file, ``append`` adds to the
end, ```diff file=PATH``` edits (``-`` removed, ``+`` added, a space kept; the old lines must appear exactly
once), ``cell=ID`` does the same to a notebook cell's text, and ```bash run``` lines are commands run from
the repository root. In the scratch copy `.venv` is this environment and PYTHONPATH puts the copy's own
`grader`, `reference` and `tests` first.

`make check ASSIGNMENT=...` in the guide runs here as the tests it stands for, without the ones that grade
through the sandbox, nbgrader's round trip and the audit sample (minutes; the guide's corpus entries are
graded in-process by its own step instead). SEQGRADE_GUIDE_FULL=1 runs the whole `make check` selection
(about 3 minutes more).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "authoring-exercises.md"
FENCE = re.compile(r"^```(\w+)([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
CHECK = re.compile(r"^make check ASSIGNMENT=(\w+)$")
FAST = ["-m", "not slow", "-k", "not through_the_sandbox and not corpus_entry_is_graded and not fixed_sample"]


@dataclass
class Step:
    number: int
    lang: str
    body: str
    options: dict = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"guide block {self.number} ({self.lang} {' '.join(f'{k}={v}' for k, v in self.options.items())})"


def steps(text: str) -> list[Step]:
    """The guide's executable blocks, in order; other blocks illustrate and are left out."""
    found = []
    for number, (lang, info, body) in enumerate(FENCE.findall(text), start=1):
        options = dict(word.split("=", 1) if "=" in word else (word, True) for word in info.split())
        if "file" in options or (lang == "bash" and options.get("run")):
            found.append(Step(number, lang, body, options))
    return found


def edit(text: str, hunk: str, where: str) -> str:
    """``text`` with the diff ``hunk`` applied: its old lines (space and ``-``) must appear exactly once."""
    lines = hunk.split("\n")[:-1] if hunk.endswith("\n") else hunk.split("\n")
    for line in lines:
        assert line[:1] in ("", " ", "-", "+"), f"{where}: a diff line must start with a space, - or +: {line!r}"
    old = [line[1:] for line in lines if line[:1] in ("", " ", "-")]
    new = [line[1:] for line in lines if line[:1] in ("", " ", "+")]
    have = text.split("\n")
    at = [i for i in range(len(have) - len(old) + 1) if have[i:i + len(old)] == old]
    assert len(at) == 1, f"{where}: its old lines appear {len(at)} times, not once:\n" + "\n".join(old)
    return "\n".join(have[:at[0]] + new + have[at[0] + len(old):])


def change(current: str | None, step: Step, *, cell: bool) -> str:
    if step.lang == "diff":
        assert current is not None, f"{step.where}: nothing to edit"
        return edit(current, step.body, step.where)
    body = step.body.rstrip("\n") if cell else step.body
    if step.options.get("append"):
        assert current is not None, f"{step.where}: nothing to append to"
        return current + body
    return body


def apply(step: Step, root: Path) -> None:
    path = root / step.options["file"]
    if "cell" not in step.options:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(change(path.read_text() if path.exists() else None, step, cell=False))
        return
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if c.get("id") == step.options["cell"]]
    assert len(cells) == 1, f"{step.where}: {path.name} has {len(cells)} cells with that id"
    cells[0].source = change(cells[0].source, step, cell=True)
    path.write_text(nbformat.writes(nb) + "\n")


def run(step: Step, root: Path, env: dict, full: bool) -> None:
    for line in step.body.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        check = CHECK.match(line.strip())
        command = ([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--assignment={check.group(1)}",
                    *([] if full else FAST)] if check else ["bash", "-c", line])
        proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=1500)
        assert proc.returncode == 0, f"{step.where}: `{line}` failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"


def scratch_copy(dest: Path) -> Path:
    """The course as it is in this working tree (tracked files, and new ones git does not ignore)."""
    listed = subprocess.run(["git", "ls-files", "-coz", "--exclude-standard"], cwd=ROOT, capture_output=True)
    if listed.returncode != 0:
        shutil.copytree(ROOT, dest, symlinks=True, ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", ".hypothesis", ".pytest_cache", "demo-out", "release", "solutions"))
    else:
        for name in filter(None, listed.stdout.decode().split("\0")):
            source = ROOT / name
            if source.is_symlink() or source.is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest / name, follow_symlinks=False)
    (dest / ".venv").symlink_to(Path(sys.executable).resolve().parents[1] if not (ROOT / ".venv").exists()
                                else ROOT / ".venv")
    return dest


def test_the_guide_marks_what_it_executes():
    found = steps(GUIDE.read_text())
    assert [s for s in found if s.lang == "bash"], "the guide runs no command"
    assert any(CHECK.match(line.strip()) for s in found if s.lang == "bash" for line in s.body.splitlines()), \
        "the guide does not end with make check"
    assert all(s.options.get("run") for s in found if s.lang == "bash")
    make = (ROOT / "Makefile").read_text()
    assert "$(PY) -m pytest -q --assignment=$(ASSIGNMENT)" in make, "make check runs what this test runs"


def test_edit_applies_a_hunk_found_once_and_refuses_an_ambiguous_one():
    text = "a\nb\nc\nb\n"
    assert edit(text, " a\n-b\n+B\n", "t") == "a\nB\nc\nb\n"
    with pytest.raises(AssertionError, match="appear 2 times"):
        edit(text, "-b\n+B\n", "t")
    with pytest.raises(AssertionError, match="appear 0 times"):
        edit(text, " x\n+y\n", "t")


def test_following_the_guide_gives_an_assignment_that_passes_its_tests(tmp_path):
    """Every block of the guide, applied in order to a scratch copy of the course; then its checks."""
    root = scratch_copy(tmp_path / "course")
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    full = os.environ.get("SEQGRADE_GUIDE_FULL") == "1"
    done = []
    for step in steps(GUIDE.read_text()):
        if step.lang == "bash":
            run(step, root, env, full)
        else:
            apply(step, root)
        done.append(step.where)
    assert done
    # The worked example is in the copy, and the real course was not touched.
    listed = subprocess.run([sys.executable, "-m", "grader.cli", "list"], cwd=root, env=env, capture_output=True,
                            text=True, timeout=300)
    assert "gru_cell" in listed.stdout and "rnn_lm (rnn_lm.ipynb): 43.5 points" in listed.stdout, listed.stdout[-2000:]
    assert "gru_cell" not in (ROOT / "assignments" / "source" / "rnn_lm" / "rnn_lm.ipynb").read_text()
    assert "def gru_cell" not in (ROOT / "reference" / "rnn_lm.py").read_text()
