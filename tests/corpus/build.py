"""Turn the corpus entries into notebooks, each named ``<kind>-<entry>.ipynb``, from the solution notebook."""

from __future__ import annotations

import copy
import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path

from grader.notebook import grade_id as _grade_id

HERE = Path(__file__).parent
PORT = 47817  # the loopback listener the network attacks aim at
# Files the attacks try to leave where later submissions could find them.
MARKERS = (Path("/tmp/seqgrade-pwned"), Path("/var/tmp/seqgrade-pwned"))


@dataclass
class Entry:
    kind: str
    name: str
    doc: str
    data: dict = field(default_factory=dict)

    @property
    def student(self) -> str:
        if self.kind == "structure" and self.data.get("FILENAME"):
            return Path(self.data["FILENAME"]).stem  # the id is the file's stem as it is
        return f"{self.kind}-{self.name}"


def _helpers() -> dict:
    def dumps(nb) -> bytes:
        return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")

    def code_cell(source: str) -> dict:
        return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}

    def at_minor(nb, minor: int) -> bytes:
        nb["nbformat_minor"] = minor
        for c in nb["cells"]:
            if minor < 5:
                c.pop("id", None)
        return dumps(nb)

    return {"dumps": dumps, "code_cell": code_cell, "at_minor": at_minor}


def load(kind: str) -> list[Entry]:
    entries = []
    for path in sorted((HERE / kind).glob("*.py")):
        ns = _helpers()
        exec(compile(path.read_text(), str(path), "exec"), ns)
        entries.append(Entry(kind, path.stem, (ns.get("__doc__") or "").strip(), ns))
    return entries


def _apply(nb: dict, replace: dict, cells: list[str], values: dict) -> dict:
    nb = copy.deepcopy(nb)
    fill = lambda s: s.format(**values) if "{" in s and any("{" + k + "}" in s for k in values) else s  # noqa: E731
    for cell in nb["cells"]:
        gid = _grade_id(cell)
        if gid in replace:
            cell["source"] = fill(replace[gid])
    at = next(i for i, c in enumerate(nb["cells"]) if _grade_id(c) == "imports") + 1
    for offset, src in enumerate(cells):
        nb["cells"].insert(
            at + offset,
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": fill(src)},
        )
    return nb


def build_corpus(
    solution: Path, dest: Path, *, project: Path, out: Path, honest_copies: int = 3, select: list[str] = ()
) -> dict[str, Entry]:
    """Write every notebook into ``dest`` (only the student ids matching a pattern of ``select``, when
    given); return {student id: entry}."""
    dest.mkdir(parents=True, exist_ok=True)
    text = solution.read_text()
    base = json.loads(text)
    values = {"project": str(project), "submissions": str(dest), "out": str(out), "port": PORT}
    wrong = {e.name: e for e in load("wrong")}
    made: dict[str, Entry] = {}
    for i in range(honest_copies):
        (dest / f"honest-{i}.ipynb").write_text(text)
        made[f"honest-{i}"] = Entry("honest", str(i), "the solution")
    for e in wrong.values():
        (dest / f"{e.student}.ipynb").write_text(
            json.dumps(_apply(base, e.data["REPLACE"], [], values), indent=1) + "\n"
        )
        made[e.student] = e
    for e in load("hostile"):
        honest = wrong[e.data["HONEST"]].data["REPLACE"] if e.data["HONEST"] else {}
        nb = _apply(base, {**honest, **e.data["ATTACK"]}, e.data["ATTACK_CELLS"], values)
        (dest / f"{e.student}.ipynb").write_text(json.dumps(nb, indent=1) + "\n")
        made[e.student] = e
    for kind in ("forgery", "degenerate", "alternative"):
        for e in load(kind) + (generated_degenerate(base) if kind == "degenerate" else []):
            nb = _apply(base, e.data["REPLACE"], e.data.get("INSERT", []), values)
            (dest / f"{e.student}.ipynb").write_text(json.dumps(nb, indent=1) + "\n")
            made[e.student] = e
    for e in load("structure"):
        name = e.data.get("FILENAME") or f"{e.student}.ipynb"
        (dest / name).write_bytes(e.data["build"](copy.deepcopy(base), text))
        made[e.student] = e
    if select:
        for student in [s for s in made if not any(fnmatch.fnmatch(s, pattern) for pattern in select)]:
            entry = made.pop(student)
            name = entry.data.get("FILENAME") if entry.kind == "structure" else None
            (dest / (name or f"{student}.ipynb")).unlink()
    return made


def generated_degenerate(solution: dict | None = None) -> list[Entry]:
    """The generated degenerate entries of sequence_models (tests/corpus/generated.py), their cells made
    from ``solution`` (the solution notebook as JSON) when given."""
    from .generated import fill, ignoring_entries

    entries = ignoring_entries("sequence_models")
    return [fill(e, solution) for e in entries] if solution is not None else entries


def validate_entries() -> list[str]:
    """Problems in the corpus files themselves (unknown grade ids, checks or exercises)."""
    from grader.assignments.registry import SEQUENCE_MODELS

    exercises = {e.id: {c.name for c in e.checks} for e in SEQUENCE_MODELS.exercises}
    cells = set(exercises) | {"imports"}
    problems = []
    for e in load("wrong"):
        problems += [f"{e.name}: unknown cell {g}" for g in e.data["REPLACE"] if g not in cells]
        for ex, checks in e.data["FAILS"].items():
            if ex not in exercises:
                problems.append(f"{e.name}: unknown exercise {ex}")
            problems += [f"{e.name}: unknown check {c}" for c in checks or [] if c not in exercises.get(ex, ())]
    for e in load("hostile"):
        problems += [f"{e.name}: unknown cell {g}" for g in e.data["ATTACK"] if g not in cells]
    for kind in ("forgery", "degenerate", "alternative"):
        for e in load(kind):
            problems += [f"{kind}/{e.name}: unknown cell {g}" for g in e.data["REPLACE"] if g not in cells]
            problems += [
                f"{kind}/{e.name}: unknown exercise {x}" for x in e.data.get("HONEST", {}) if x not in exercises
            ]
    return problems
