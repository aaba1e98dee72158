"""Each assignment's own corpus (tests/corpus/courses/<assignment>/): wrong, degenerate and alternative
solutions, written as replacements of cells of the assignment's solution notebook.

- ``wrong/<name>.py``: ``REPLACE`` and ``FAILS`` ({exercise: [exactly the checks that fail]}): every
  other check of every exercise keeps its points;
- ``degenerate/<name>.py``: ``REPLACE``; the replaced exercises earn nothing from any check, the others
  keep full marks; ``degenerate-ignores_input_<k>`` entries are generated (tests/corpus/generated.py): every
  function ignores its k-th main input;
- ``alternative/<name>.py``: ``REPLACE`` with another correct form; full marks.

An entry with ``SANDBOX_ONLY = True`` tampers with something only the sandbox measures from outside
(its own recorded peak memory): the in-process authoring run below skips it.

An entry's file name is its student id, ``<kind>-<name>``, and names its result (``results/<id>.json``), so it
must be a plain id (``grader.batch.identity.is_plain``): :class:`EntryNameError` says so when the entries are read.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from grader.batch.identity import file_stem, is_plain
from grader.notebook import grade_id

from .build import Entry, load
from .generated import fill, ignoring_entries, may_earn

HERE = Path(__file__).parent / "courses"
KINDS = ("wrong", "degenerate", "alternative")


class EntryNameError(ValueError):
    """A corpus entry whose file name is not a plain student id, so its result would be filed under another name."""

    def __init__(self, path: Path, kind: str):
        student = f"{kind}-{path.stem}"
        better = re.sub(r"[^a-z0-9_]+", "_", path.stem.lower()).strip("_")[: 63 - len(kind)] or "entry"
        super().__init__(
            f"{path}: a corpus entry's file name gives its student id, {student!r}, and the name of its result file; "
            f"{student!r} is not a plain id (lowercase ASCII letters, digits, '_', '.', '@' and '-', starting with a "
            f"letter or digit, at most 64 characters), so its result would be written as {file_stem(student)}.json "
            f"and the tests would not find it. Rename the file, e.g. to {better}.py"
        )
        self.path, self.student = path, student


def assignments_with_corpus() -> list[str]:
    return (
        sorted(p.name for p in HERE.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
        if HERE.is_dir()
        else []
    )


def entries(assignment: str, kind: str) -> list[Entry]:
    """The entries of one kind, read from their files; EntryNameError for a file name that is not a plain id."""
    folder = HERE / assignment / kind
    found = (
        [Entry(kind, e.name, e.doc, e.data) for e in load(str(folder.relative_to(HERE.parent)))]
        if folder.is_dir()
        else []
    )
    for e in found:
        if not is_plain(f"{kind}-{e.name}"):
            raise EntryNameError(folder.relative_to(HERE.parents[2]) / f"{e.name}.py", kind)
    return found + (ignoring_entries(assignment) if kind == "degenerate" and found else [])


def all_entries(assignment: str) -> dict[str, Entry]:
    return {f"{kind}-{e.name}": e for kind in KINDS for e in entries(assignment, kind)}


def replaced(solution: dict, replace: dict) -> dict:
    nb = copy.deepcopy(solution)
    for cell in nb["cells"]:
        gid = grade_id(cell)
        if gid in replace:
            cell["source"] = replace[gid]
    return nb


def build(assignment: str, solution: Path, dest: Path) -> dict[str, Entry]:
    """Write one notebook per entry (``<kind>-<name>.ipynb``) into ``dest``; return {student id: entry}."""
    dest.mkdir(parents=True, exist_ok=True)
    base = json.loads(solution.read_text())
    made = {student: fill(e, base) for student, e in all_entries(assignment).items()}
    for student, e in made.items():
        (dest / f"{student}.ipynb").write_text(json.dumps(replaced(base, e.data["REPLACE"]), indent=1) + "\n")
    return made


def expected_problems(assignment, entry: Entry, result: dict) -> list[str]:
    """How a graded result (results JSON, as a dict) departs from what the entry declares; [] when it does not."""
    full = {e.id: e.points for e in assignment.exercises if e.kind != "manual"}
    got = {e["id"]: e for e in result.get("exercises", []) if e["id"] in full}
    problems = []
    if set(got) != set(full):
        return [f"graded exercises {sorted(got)} are not the assignment's {sorted(full)}"]
    replace = entry.data.get("REPLACE", {})
    for ex_id, points in full.items():
        ex = got[ex_id]
        failed = [c["name"] for c in ex["checks"] if c["status"] != "passed"]
        if entry.kind == "wrong" and ex_id in entry.data["FAILS"]:
            if failed != list(entry.data["FAILS"][ex_id]):
                problems.append(f"{ex_id}: failed {failed}, declared {entry.data['FAILS'][ex_id]}")
            if not ex.get("root_cause"):
                problems.append(f"{ex_id}: the feedback names no root cause")
        elif entry.kind == "degenerate" and ex_id in replace:
            ignored = entry.data.get("IGNORE", {})
            allowed = may_earn(assignment.exercise(ex_id), ignored[ex_id]) if ex_id in ignored else set()
            earned = [c["name"] for c in ex["checks"] if c["points"] and c["name"] not in allowed]
            if earned:
                problems.append(f"{ex_id}: degenerate code earned points from {earned}")
        elif ex["score"] != points:
            problems.append(
                f"{ex_id}: {ex['score']} of {points} points; failed {failed}: "
                + "; ".join(c["message"][:300] for c in ex["checks"] if c["status"] != "passed")
            )
    return problems


def _main(argv: list[str]) -> int:
    """``python -m tests.corpus.courses ASSIGNMENT [ENTRY...]``: grade the corpus in-process (fast, for
    authoring; the tests grade it through the sandbox) and print each entry's departures from its declaration."""
    import tempfile

    from grader.assignments.registry import get_assignment
    from grader.course.release import release
    from grader.grading import Grader

    assignment = get_assignment(argv[0])
    with tempfile.TemporaryDirectory() as tmp:
        solution = release(assignment.id, Path(tmp) / "solution", solutions=True) / assignment.notebook
        made = build(assignment.id, solution, Path(tmp) / "submissions")
        made = {"honest": Entry("alternative", "honest", "the solution"), **made}
        (Path(tmp) / "submissions" / "honest.ipynb").write_text(solution.read_text())
        bad = 0
        with Grader(backend="inprocess") as grader:
            for student, entry in made.items():
                if len(argv) > 1 and not any(a in student for a in argv[1:]):
                    continue
                if entry.data.get("SANDBOX_ONLY"):  # tampers with what only the sandbox measures from outside
                    print(f"--  {student}: graded through the sandbox only (tests/test_courses.py)")
                    continue
                result = grader.grade(Path(tmp) / "submissions" / f"{student}.ipynb", assignment.id)
                problems = expected_problems(assignment, entry, result.to_dict())
                bad += bool(problems)
                print(("ok  " if not problems else "BAD ") + student + "".join(f"\n      {p}" for p in problems))
    return 1 if bad else 0


if __name__ == "__main__":
    import sys

    sys.exit(_main(sys.argv[1:]))
