"""docs/authoring-exercises.md, executed: its blocks are applied, in order, to a scratch copy of the course,
and then the assignment's tests run on the result, so a step the guide leaves out (or gets wrong) fails here.

The guide's convention (stated at its top): ```python file=PATH``` is a new file, ``append`` adds to the
end (of a Python file, after two blank lines), ```diff file=PATH``` edits (``-`` removed, ``+`` added, a
space kept; the old lines must appear exactly once), ``cell=ID`` does the same to a notebook cell's text,
and ```bash run``` lines are commands run from the repository root. In the scratch copy `.venv` is this
environment and PYTHONPATH puts the copy's own `grader`, `reference` and `tests` first.

`make check ASSIGNMENT=...` in the guide runs here as the tests it stands for, without the ones that grade
through the sandbox, nbgrader's round trip and the audit sample (minutes; the guide's corpus entries are
graded in-process by its own step instead). SEQGRADE_GUIDE_FULL=1 runs the whole `make check` selection
(about 3 minutes more).

The guide's counts are kept true here too: the files its first part says adding an exercise touches are the
files following it changed (ruff-clean where they were), and the places it says adding an assignment takes
name every hand list the code keeps of the assignments.
"""

from __future__ import annotations

import hashlib
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
COUNTED = re.compile(r"touches (\d+) files, in (\d+) places:\n\n(\|.*?)\n\n", re.S)  # the table of Part 1's files
AT_LEAST = re.compile(r"An exercise takes (\d+) files at the least")
PLACES = re.compile(r"A new assignment takes (\d+) places")
SCRATCH = ("__pycache__", ".hypothesis", ".pytest_cache", ".ruff_cache", ".venv")  # what running the tests leaves


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
    at = [i for i in range(len(have) - len(old) + 1) if have[i : i + len(old)] == old]
    assert len(at) == 1, f"{where}: its old lines appear {len(at)} times, not once:\n" + "\n".join(old)
    return "\n".join(have[: at[0]] + new + have[at[0] + len(old) :])


def change(current: str | None, step: Step, *, cell: bool) -> str:
    if step.lang == "diff":
        assert current is not None, f"{step.where}: nothing to edit"
        return edit(current, step.body, step.where)
    body = step.body.rstrip("\n") if cell else step.body
    if step.options.get("append"):
        assert current is not None, f"{step.where}: nothing to append to"
        python = str(step.options.get("file", "")).endswith(".py") and not cell
        return current.rstrip("\n") + "\n\n\n" + body if python else current + body
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
        command = (
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--assignment={check.group(1)}",
                *([] if full else FAST),
            ]
            if check
            else ["bash", "-c", line]
        )
        proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=1500)
        assert proc.returncode == 0, f"{step.where}: `{line}` failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"


def scratch_copy(dest: Path) -> Path:
    """The course as it is in this working tree (tracked files, and new ones git does not ignore)."""
    listed = subprocess.run(["git", "ls-files", "-coz", "--exclude-standard"], cwd=ROOT, capture_output=True)
    if listed.returncode != 0:
        shutil.copytree(
            ROOT,
            dest,
            symlinks=True,
            ignore=shutil.ignore_patterns(
                ".git", ".venv", "__pycache__", ".hypothesis", ".pytest_cache", "demo-out", "release", "solutions"
            ),
        )
    else:
        for name in filter(None, listed.stdout.decode().split("\0")):
            source = ROOT / name
            if source.is_symlink() or source.is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest / name, follow_symlinks=False)
    (dest / ".venv").symlink_to(
        Path(sys.executable).resolve().parents[1] if not (ROOT / ".venv").exists() else ROOT / ".venv"
    )
    return dest


def digests(root: Path) -> dict[str, str]:
    """{path relative to ``root``: sha256 of its bytes} for every file but what running the tests leaves."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not any(part in SCRATCH for part in rel.parts) and (path.is_file() or path.is_symlink()):
            found[str(rel)] = hashlib.sha256(
                os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            ).hexdigest()
    return found


def counted(text: str) -> tuple[int, int, list[str], int]:
    """The guide's count of Part 1's files: (files said, places said, the files its table names, at the least)."""
    found = COUNTED.search(text)
    assert found, "the guide does not say how many files adding the exercise touches, in a table"
    rows = [row for row in found.group(3).splitlines()[2:] if row.startswith("|")]
    files = [path for row in rows for path in re.findall(r"`([\w./-]+/[\w.-]+\.\w+)`", row.split("|")[2])]
    least = AT_LEAST.search(text)
    assert least, "the guide does not say how many files an exercise takes at the least"
    assert int(found.group(2)) == len(rows), f"the table has {len(rows)} places, the guide says {found.group(2)}"
    return int(found.group(1)), len(rows), files, int(least.group(1))


def ruff_clean(root: Path, paths: list[str]) -> set[str]:
    """The Python files of ``paths`` that `ruff check` and `ruff format --check` pass (settings: root's)."""
    ruff = Path(sys.executable).with_name("ruff")
    clean = set()
    for path in (p for p in paths if p.endswith(".py") and (root / p).is_file()):
        runs = [
            subprocess.run([str(ruff), *args, "--force-exclude", path], cwd=root, capture_output=True)
            for args in (["check", "-q"], ["format", "--check", "-q"])
        ]
        if all(r.returncode == 0 for r in runs):
            clean.add(path)
    return clean


def test_the_guide_marks_what_it_executes():
    found = steps(GUIDE.read_text())
    assert [s for s in found if s.lang == "bash"], "the guide runs no command"
    assert any(CHECK.match(line.strip()) for s in found if s.lang == "bash" for line in s.body.splitlines()), (
        "the guide does not end with make check"
    )
    assert all(s.options.get("run") for s in found if s.lang == "bash")
    make = (ROOT / "Makefile").read_text()
    # the same selection (make check may spread it over workers with pytest-xdist's -n)
    assert re.search(r"\$\(PY\) -m pytest -q( -n \S+| --dist \S+)* --assignment=\$\(ASSIGNMENT\)", make), (
        "make check runs what this test runs"
    )


def test_edit_applies_a_hunk_found_once_and_refuses_an_ambiguous_one():
    text = "a\nb\nc\nb\n"
    assert edit(text, " a\n-b\n+B\n", "t") == "a\nB\nc\nb\n"
    with pytest.raises(AssertionError, match="appear 2 times"):
        edit(text, "-b\n+B\n", "t")
    with pytest.raises(AssertionError, match="appear 0 times"):
        edit(text, " x\n+y\n", "t")


def test_the_guides_counts_agree_with_its_table():
    said, _, files, least = counted(GUIDE.read_text())
    assert said == len(files) == len(set(files)), (said, files)
    corpus = [f for f in files if f.startswith("tests/corpus/courses/")]
    assert least == len(files) - len(corpus) + 1, "at the least: the same files with one corpus entry"


def test_the_assignment_places_are_the_hand_lists_the_code_keeps():
    """Every file outside an assignment's own folders, in grader/ and tests/conftest.py, that names the assignment
    is a place the guide's "Adding an assignment" lists (sequence_models, the course's default assignment, is also
    named as a fallback), and each place it lists is real for every assignment."""
    text = GUIDE.read_text()
    section = text[text.index("## Adding an assignment") :]
    places = re.findall(r"^(\d+)\. ", section, re.M)
    said = PLACES.search(section)
    assert said and places == [str(i) for i in range(1, len(places) + 1)], "the places are numbered 1, 2, ..."
    assert int(said.group(1)) == len(places) - 1, "the places it counts are the list's, less the optional last one"
    from grader.assignments import assignment_ids

    recorded = (ROOT / "tests" / "corpus" / "recorded.json").read_text()
    for assignment in assignment_ids():
        literal = re.compile(rf"[\"']{assignment}[\"']")
        naming = {
            str(p.relative_to(ROOT))
            for p in [*(ROOT / "grader").rglob("*.py"), ROOT / "tests" / "conftest.py"]
            if "__pycache__" not in p.parts
            and (ROOT / "grader" / "assignments" / assignment) not in p.parents
            and literal.search(p.read_text(encoding="utf-8"))
        }
        if assignment == "sequence_models":
            naming -= {"grader/nbgrader_hook.py", "grader/course/samples.py"}  # its default, not a registration
        assert naming and all(f"`{path}`" in section for path in naming), (assignment, naming)
        for folder in ("grader/assignments", "assignments/source", "tests/corpus/courses"):
            assert f"`{folder}/<id>/`" in section
            assert (ROOT / folder / assignment).is_dir() or assignment == "sequence_models", (folder, assignment)
        assert f'"{assignment}/' in recorded and "`tests/corpus/recorded.json`" in section, assignment


@pytest.mark.slow
def test_following_the_guide_gives_an_assignment_that_passes_its_tests(tmp_path):
    """Every block of the guide, applied in order to a scratch copy of the course; then its checks. The files it
    changed are the ones its table counts, and the Python ones that ruff passed before pass it still."""
    root = scratch_copy(tmp_path / "course")
    before = digests(root)
    _, _, files, _ = counted(GUIDE.read_text())
    clean = ruff_clean(root, files)
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
    after = digests(root)
    changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    assert changed == set(files), f"the guide's table counts {sorted(files)}; following it changed {sorted(changed)}"
    assert clean - ruff_clean(root, files) == set(), "a file ruff passed before the guide's steps fails it after"
    recorded = (root / "tests" / "corpus" / "recorded.json").read_text()
    assert '"rnn_lm/wrong-gru_float32"' in recorded, "the results were recorded again, the new entries' too"
    # The worked example is in the copy, and the real course was not touched.
    listed = subprocess.run(
        [sys.executable, "-m", "grader.cli", "list"], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert "gru_cell" in listed.stdout and "gru_gates" in listed.stdout, listed.stdout[-2000:]
    assert "rnn_lm (rnn_lm.ipynb): 44.5 points" in listed.stdout, listed.stdout[-2000:]
    assert "gru_cell" not in (ROOT / "assignments" / "source" / "rnn_lm" / "rnn_lm.ipynb").read_text()
    assert "def gru_cell" not in (ROOT / "reference" / "rnn_lm.py").read_text()
