"""An exercise's notebook cells, written from its declaration, and the notebook's points kept in step with it.

The declaration (``grader/assignments/<assignment>/__init__.py``) is the only source of points. From it,

- :func:`add_exercise_cells` inserts a declared exercise's cells into the source notebook, with the ids,
  nbgrader metadata and text the course tests require: a markdown cell to write the exercise in, the
  solution cell (``grade_id`` = the name; the reference's signature and a stub between nbgrader's
  solution markers), the self-check cell (a 0-point grade cell ``selfcheck_<name>`` calling
  ``selfcheck.check_<name>``) and the autograded cell (``test_<name>``, the declared points, the hidden
  call of ``grader.nbgrader_hook.score``); for a written question (kind ``manual``), the question's markdown
  cell and the answer cell (a markdown grade cell ``<name>`` with the declared ``manual_points``, a model
  answer between the solution markers). The cells go under a section heading: into the empty section that
  follows the place (a heading with no exercise under it yet), or, where no heading comes before them, under
  a heading new-exercise writes;
- :func:`sync_points` makes every point the notebook states agree with the declaration: each autograded
  cell's points and the "(N points)" of its first line, each ``## N. Title (P points)`` heading (the
  points of the exercises under it) and the first "N points" of the introduction (the total).

Both return what they changed and what they could not do, as sentences for the command line.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from grader.errors import UsageError
from grader.fsutil import write_atomic
from grader.notebook import grade_id as _grade_id

from .placeholders import (  # noqa: F401 (PLACEHOLDERS re-exported)
    DOCSTRING_PLACEHOLDER,
    EXERCISE_PLACEHOLDER,
    MODEL_ANSWER_PLACEHOLDER,
    PLACEHOLDERS,
    QUESTION_PLACEHOLDER,
    SECTION_PLACEHOLDER,
    WRITTEN_PLACEHOLDER,
)
from .release import ASSIGNMENTS_ROOT

HEADING = re.compile(r"^## \d+\.")
GROUP = re.compile(r"\(([^()]*\bpoints?\b[^()]*)\)\s*$")  # the heading's "(6 points, and 2 for the question)"
NUMBER = re.compile(r"\d+(?:\.\d+)?")
STATED = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)(\**) points?\b")  # "38 points", "**40 points**"
CELL_POINTS = re.compile(r"\((?:bonus: )?(\d+(?:\.\d+)?) points?\)")  # "(4 points)", "(bonus: 5 points)"
POINTS_SAID = re.compile(r"\d+(?:\.\d+)? points?\b")  # "6 points" in "(6 points, and 2 for the question)"


class ScaffoldError(UsageError):
    """The exercise is not declared, already has cells, or the notebook cannot take them where asked."""


@dataclass
class Report:
    path: Path
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the author must still do by hand


def _points(p: float) -> str:
    return f"{p:g} point" + ("" if p == 1 else "s")


def _worth(exercise) -> str:
    """What an autograded cell's first line says it is worth: "(4 points)", or "(bonus: 5 points)" for a bonus,
    whose nbgrader cell is worth 0 points (its points come on top of the assignment's total)."""
    return f"({'bonus: ' if exercise.bonus else ''}{_points(exercise.points)})"


def _meta(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _signature(exercise) -> str:
    """``name(a, b=None)`` with the parameters of the declared reference, or ``name()`` when it declares none."""
    params = inspect.signature(exercise.reference).parameters.values() if exercise.reference is not None else ()
    return f"{exercise.id}({', '.join(p.name if p.default is p.empty else f'{p.name}={p.default!r}' for p in params)})"


def _cells(assignment: str, exercise) -> list:
    name, v4 = exercise.id, nbformat.v4
    if exercise.kind == "manual":  # a written question: its text, and the answer cell staff grade by hand
        answer = f"### BEGIN SOLUTION\n{MODEL_ANSWER_PLACEHOLDER}\n### END SOLUTION"
        return [
            v4.new_markdown_cell(f"**Question (manually graded).** {WRITTEN_PLACEHOLDER}", id=f"md-{name}"),
            v4.new_markdown_cell(
                answer,
                id=name,
                metadata=_meta(name, grade=True, solution=True, locked=False, points=float(exercise.max_points)),
            ),
        ]
    if exercise.kind == "function":
        body = (
            f'def {_signature(exercise)}:\n    """{DOCSTRING_PLACEHOLDER}"""\n    ### BEGIN SOLUTION\n'
            f"    raise NotImplementedError()\n    ### END SOLUTION"
        )
        ask = f"**Exercise.** Write `{_signature(exercise)}`{EXERCISE_PLACEHOLDER}"
    elif exercise.kind == "answer":
        body, ask = (
            f"### BEGIN SOLUTION\n{name} = None\n### END SOLUTION",
            f"{QUESTION_PLACEHOLDER}, and say what type `{name}` must have (a letter as a string, a bool, an int).",
        )
    else:
        raise ScaffoldError(
            f"{name} is a {exercise.kind!r} exercise: add its cells in Jupyter (nbgrader's "
            f"Create Assignment toolbar); this command writes function, answer and manual exercises"
        )
    cells = [
        v4.new_markdown_cell(ask, id=f"md-{name}"),
        v4.new_code_cell(body, id=name, metadata=_meta(name, grade=False, solution=True, locked=False)),
    ]
    if exercise.kind == "function":
        cells.append(
            v4.new_code_cell(
                f"# Self-check: {name}\nselfcheck.check_{name}({name})",
                id=f"selfcheck-{name}",
                metadata=_meta(f"selfcheck_{name}", grade=True, solution=False, locked=True, points=0),
            )
        )
    cells.append(
        v4.new_code_cell(
            f"# Autograded test for {name} {_worth(exercise)}. It is filled in when your notebook is graded.\n"
            f"### BEGIN HIDDEN TESTS\nimport grader.nbgrader_hook as _seqgrade_hook\n"
            f'_seqgrade_hook.score("{name}", globals(), "{assignment}")\n### END HIDDEN TESTS',
            id=f"test-{name}",
            metadata=_meta(f"test_{name}", grade=True, solution=False, locked=True, points=float(exercise.max_points)),
        )
    )
    return cells


def _notebook(assignment_id: str, root: Path):
    from grader.assignments.registry import get_assignment

    spec = get_assignment(assignment_id)
    path = root / "source" / assignment_id / spec.notebook
    return spec, path, nbformat.read(path, as_version=4)


def add_exercise_cells(
    assignment_id: str, name: str, *, after: str | None = None, root: Path = ASSIGNMENTS_ROOT
) -> Report:
    """Insert the cells of the declared exercise ``name`` after the cells of exercise ``after`` (default:
    the exercise declared just before it; for the first, the imports cell), or under the heading of an empty
    section that follows them; where no heading comes before them, the first cell starts section 1 under a
    heading to name. Then :func:`sync_points`. The notebook is written once."""
    spec, path, nb = _notebook(assignment_id, root)
    ids = [e.id for e in spec.exercises]
    if name not in ids:
        raise ScaffoldError(
            f"{assignment_id} declares no exercise {name!r}: add it to grader/assignments/"
            f"{assignment_id}/__init__.py first (its points come from there)"
        )
    if any(_grade_id(c) in (name, f"test_{name}", f"selfcheck_{name}") for c in nb.cells):
        raise ScaffoldError(f"{path.name} already has cells for {name}")
    after = after or (ids[ids.index(name) - 1] if ids.index(name) else "imports")
    owned = {after, f"test_{after}", f"selfcheck_{after}"}
    at = [i for i, c in enumerate(nb.cells) if _grade_id(c) in owned]
    if not at:
        raise ScaffoldError(f"{path.name} has no cells of {after!r} to put {name} after")
    cells = _cells(assignment_id, spec.exercise(name))
    report = Report(path)
    place, section = _place(nb.cells, at[-1] + 1)
    where = f"under the heading {section!r}" if section else f"after {after}'s"
    if section is None and not any(_heading(c) for c in nb.cells[:place]):  # no section holds it: start one
        cells[0].source = f"## 1. {SECTION_PLACEHOLDER} ({_points(spec.exercise(name).points)})\n\n{cells[0].source}"
        where = f"after {after}'s, under a new heading '## 1. {SECTION_PLACEHOLDER}' for you to name"
        if any(_heading(c) for c in nb.cells[place:]):
            report.notes.append(f"md-{name} starts section 1: number the sections after it again")
    nb.cells[place:place] = cells
    report.changed.append(f"added the cells {', '.join(c.id for c in cells)} {where}")
    _sync(spec, nb, report)
    selfcheck = path.parent / "selfcheck.py"
    if spec.exercise(name).kind == "function" and f"def check_{name}(" not in selfcheck.read_text(encoding="utf-8"):
        where = selfcheck.relative_to(root.parent)
        report.notes.append(f"{where} has no check_{name} yet: the self-check cell calls it")
    write_atomic(path, nbformat.writes(nb) + "\n")
    return report


def _heading(cell) -> str | None:
    """The ``## N. Title`` line of a markdown cell, or None."""
    if cell.cell_type != "markdown":
        return None
    return next((line for line in cell.source.splitlines() if HEADING.match(line)), None)


def _place(cells: list, at: int) -> tuple[int, str | None]:
    """Where new cells meant for place ``at`` go, and the heading they go under when it is not the one above:
    at the end of an empty section that follows (its heading comes after cells of no exercise, and no exercise's
    cell comes before the next heading), so that a section's first exercise lands under its heading."""
    i = at
    while i < len(cells) and not _grade_id(cells[i]) and not _heading(cells[i]):
        i += 1
    if i == len(cells) or not _heading(cells[i]):
        return at, None
    end = i + 1
    while end < len(cells) and not _heading(cells[end]):
        if _grade_id(cells[end]):
            return at, None  # the section holds an exercise already: the new one is not its first
        end += 1
    return end, _heading(cells[i])


def sync_points(assignment_id: str, *, write: bool = True, root: Path = ASSIGNMENTS_ROOT) -> Report:
    """Make the notebook's stated points agree with the declaration; write it if something changed and
    ``write``. ``report.changed`` lists each change (made, or needed when not ``write``)."""
    spec, path, nb = _notebook(assignment_id, root)
    report = Report(path)
    _sync(spec, nb, report)
    if report.changed and write:
        write_atomic(path, nbformat.writes(nb) + "\n")
    return report


def _sync(spec, nb, report: Report) -> None:
    exercises = {(e.id if e.kind == "manual" else f"test_{e.id}"): e for e in spec.exercises}
    for cell in nb.cells:
        gid, exercise = _grade_id(cell), exercises.get(_grade_id(cell))
        if exercise is None:
            continue
        want = exercise.max_points  # nbgrader's points: 0 for a bonus
        if cell.metadata.nbgrader.get("points") != float(want):
            report.changed.append(f"{gid}: {cell.metadata.nbgrader.get('points')} -> {want:g} points")
            cell.metadata.nbgrader["points"] = float(want)
        first = cell.source.partition("\n")[0]
        said = CELL_POINTS.search(first)
        if said and (float(said.group(1)) != exercise.points or said.group(0).startswith("(bonus") != exercise.bonus):
            fixed = first[: said.start()] + _worth(exercise) + first[said.end() :]
            cell.source = fixed + cell.source[len(first) :]
            report.changed.append(f"{gid}: its first line now says {_worth(exercise)[1:-1]}")
    _sync_headings(spec, nb, report)
    _sync_total(spec, nb, report)


def _sync_headings(spec, nb, report: Report) -> None:
    declared = {e.id: e for e in spec.exercises}
    sections: list[list] = []  # [cell, heading line, automatic points, written questions' points, exercises]
    for cell in nb.cells:
        line = _heading(cell)
        if line:
            sections.append([cell, line, 0.0, 0.0, 0])
        elif _grade_id(cell) in declared and sections:
            exercise = declared[_grade_id(cell)]
            sections[-1][3 if exercise.kind == "manual" else 2] += exercise.points
            sections[-1][4] += 1
    for cell, line, auto, written, count in sections:
        total = auto + written
        group = GROUP.search(line)
        stated = [float(x) for x in NUMBER.findall(group.group(1))] if group else []
        new = None
        if not count:  # written ahead of its exercises: left as it is until one is added
            report.notes.append(
                f"heading {line!r} has no exercise under it yet: `seqgrade new-exercise` puts the next exercise there"
            )
        elif group and len(stated) == 1 and stated[0] != total:
            new = line[: group.start()] + f"({_points(total)})" + line[group.end() :]
        elif (
            group
            and len(stated) == 2
            and written
            and stated[1] == written
            and stated[0] != auto
            and (first := POINTS_SAID.search(line, group.start()))
        ):
            # "(6 points, and 2 for the question)": the automatic points, then the written questions'
            new = line[: first.start()] + _points(auto) + line[first.end() :]
        elif not group or sum(stated) != total:
            report.notes.append(
                f"heading {line!r}: its exercises are worth {total:g} points; state them as "
                f"'({_points(total)})' at its end"
            )
        if new is not None:
            cell.source = cell.source.replace(line, new, 1)
            report.changed.append(f"heading {line!r} -> {new!r}")


def _sync_total(spec, nb, report: Report) -> None:
    intro = nb.cells[0] if nb.cells and nb.cells[0].cell_type == "markdown" else None
    found = STATED.search(intro.source) if intro is not None else None
    total = spec.max_score
    if found is None:
        report.notes.append(f"the introduction states no total: write that the assignment is worth {total:g} points")
    elif float(found.group(1)) != total:
        intro.source = intro.source[: found.start(1)] + f"{total:g}" + intro.source[found.end(1) :]
        report.changed.append(f"the introduction's total: {found.group(1)} -> {total:g} points")
