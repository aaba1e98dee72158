"""Every assignment after sequence_models (which tests/test_assignment.py and tests/test_corpus.py cover in
more depth): its source notebook agrees with the registry, its release leaks nothing, and its corpus
(tests/corpus/courses/) is graded through the sandbox, as a TA's batch would be, exactly as each entry declares.
nbgrader's own round trip on them is tests/test_courses_nbgrader.py."""

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from grader.assignments.registry import ASSIGNMENTS
from grader.batch.run import BatchConfig, run_batch
from grader.course.release import ASSIGNMENTS_ROOT, release
from grader.notebook import grade_id as _grade_id
from grader.notebook import is_grade
from grader.notebook import points as cell_points

from .corpus import recorded
from .corpus.courses import KINDS, all_entries, assignments_with_corpus, build, entries, expected_problems

COURSES = [a for a in ASSIGNMENTS if a != "sequence_models"]
CORPUS = [(a, f"{kind}-{e.name}") for a in assignments_with_corpus() for kind in KINDS for e in entries(a, kind)]


def _source(assignment):
    return nbformat.read(ASSIGNMENTS_ROOT / "source" / assignment / ASSIGNMENTS[assignment].notebook, as_version=4)


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    root = tmp_path_factory.mktemp("courses")
    return {
        a: (
            release(a, root / "student") / ASSIGNMENTS[a].notebook,
            release(a, root / "solution", solutions=True) / ASSIGNMENTS[a].notebook,
        )
        for a in COURSES
    }


def test_every_assignment_has_a_corpus_and_is_listed_in_course_order():
    assert set(assignments_with_corpus()) == set(COURSES)
    assert list(ASSIGNMENTS)[0] == "sequence_models" and len(ASSIGNMENTS) >= 2


@pytest.mark.parametrize("assignment", COURSES)
def test_notebook_cells_match_the_registry(assignment):
    """Points, grade ids, hidden-test calls and metadata agree with the assignment's declaration."""
    spec, nb = ASSIGNMENTS[assignment], _source(assignment)
    assert nb.metadata["seqgrade"]["assignment"] == assignment
    grade_cells = {_grade_id(c): cell_points(c) for c in nb.cells if is_grade(c)}
    # Self-check cells are grade cells worth 0 points, so `nbgrader validate` reports one that fails.
    assert all(points == 0 for gid, points in grade_cells.items() if gid.startswith("selfcheck_"))
    graded = {gid: points for gid, points in grade_cells.items() if not gid.startswith("selfcheck_")}
    # nbgrader's points: a bonus's cell is worth 0 (its points come on top, as nbgrader's extra credit)
    assert graded == {(e.id if e.kind == "manual" else f"test_{e.id}"): e.max_points for e in spec.exercises}
    for e in spec.exercises:
        if e.kind == "manual":
            continue
        test = next(c for c in nb.cells if _grade_id(c) == f"test_{e.id}")
        assert f'score("{e.id}", globals(), "{assignment}")' in test.source and "BEGIN HIDDEN TESTS" in test.source
        solution = next(c for c in nb.cells if _grade_id(c) == e.id)
        defined = {
            a or b or c for a, b, c in re.findall(r"^(?:def (\w+)|class (\w+)|(\w+) =)", solution.source, re.MULTILINE)
        }
        assert e.id in defined and "### BEGIN SOLUTION" in solution.source, e.id
        if e.kind in ("function", "class"):
            assert any(_grade_id(c) == f"selfcheck_{e.id}" for c in nb.cells), f"{e.id} has no self-check cell"
    intro = nb.cells[0].source
    assert f"{spec.max_score:g} points" in intro, "the introduction states the total"


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_each_section_heading_gives_the_points_of_its_exercises(assignment):
    """Every numbered section's heading states its points (e.g. "(6 points, and 2 for the question)"),
    and they add up to the points the registry gives the exercises defined in that section."""
    spec, nb = ASSIGNMENTS[assignment], _source(assignment)
    points = {e.id: e.points for e in spec.exercises}
    sections: list[tuple[str, float]] = []  # (heading, points of the exercises under it)
    for cell in nb.cells:
        heading = next((line for line in cell.source.splitlines() if re.match(r"## \d+\.", line)), None)
        if cell.cell_type == "markdown" and heading:
            sections.append((heading, 0.0))
        if _grade_id(cell) in points and sections:
            sections[-1] = (sections[-1][0], sections[-1][1] + points.pop(_grade_id(cell)))
    assert not points, f"exercises before the first section: {sorted(points)}"
    assert sections
    for heading, total in sections:
        stated = re.search(r"\(([^()]*\bpoints?\b[^()]*)\)\s*$", heading)
        assert stated, f"{heading!r} does not give its points"
        assert sum(float(x) for x in re.findall(r"\d+(?:\.\d+)?", stated.group(1))) == total, (heading, total)


@pytest.mark.parametrize("assignment", COURSES)
def test_release_contains_no_solution_or_hidden_test(assignment, releases):
    student, _ = releases[assignment]
    secrets = {"BEGIN HIDDEN TESTS", "nbgrader_hook", "BEGIN SOLUTION", "import grader", "from reference"}
    for cell in _source(assignment).cells:
        inside = False
        for line in cell.source.splitlines():
            if "### BEGIN SOLUTION" in line:
                inside = True
            elif "### END SOLUTION" in line:
                inside = False
            elif inside and len(line.strip()) > 12:
                secrets.add(line.strip())
    files = sorted(p for p in student.parent.rglob("*") if p.is_file())
    assert {p.name for p in files} == {ASSIGNMENTS[assignment].notebook, "selfcheck.py", "selfcheck_base.py"}
    assert not any(p.is_symlink() for p in files), "the release holds the shared helper itself, not a link"
    for path in files:
        leaks = [s for s in secrets if s in path.read_text()]
        assert not leaks, (path.name, leaks[:3])


@pytest.fixture(scope="module")
def corpus(releases, tmp_path_factory):
    """Each assignment's corpus, plus its solution, graded through the sandbox in one batch per assignment
    when a test first asks for it (`make check ASSIGNMENT=<id>` grades only that assignment's)."""

    class Graded(dict):
        def __missing__(self, assignment):
            root = tmp_path_factory.mktemp(f"corpus-{assignment}")
            made = build(assignment, releases[assignment][1], root / "submissions")
            shutil.copy(releases[assignment][1], root / "submissions" / "honest.ipynb")
            run_batch(BatchConfig(str(root / "submissions"), assignment, str(root / "out"), workers=2))
            results = {
                s: json.loads(p.read_text()) if (p := root / "out" / "results" / f"{s}.json").exists() else None
                for s in [*made, "honest"]
            }
            self[assignment] = (made, results, root)
            return self[assignment]

    return Graded()


@pytest.mark.slow
@pytest.mark.parametrize("assignment", COURSES)
def test_solution_gets_full_marks_through_the_sandbox(assignment, corpus):
    result = corpus[assignment][1]["honest"]
    assert result is not None and result["status"] == "graded"
    assert result["score"] == sum(e.points for e in ASSIGNMENTS[assignment].exercises if e.kind != "manual")


@pytest.mark.slow
@pytest.mark.parametrize("assignment,student", CORPUS)
def test_corpus_entry_is_graded_as_declared(assignment, student, corpus):
    """wrong: exactly the declared checks fail, every other exercise keeps full marks; degenerate: nothing
    earned by the replaced functions; alternative: full marks."""
    made, results, _ = corpus[assignment]
    assert results[student] is not None, f"{student} has no result: the batch lost its grade"
    assert expected_problems(ASSIGNMENTS[assignment], made[student], results[student]) == []


@pytest.mark.slow
@pytest.mark.parametrize("assignment", COURSES)
def test_results_are_byte_identical_to_the_recorded_ones(assignment, corpus):
    """Every result of the assignment's corpus is the bytes recorded before (tests/corpus/recorded.py)."""
    root = corpus[assignment][2]
    found = recorded.digests(root / "out" / "results", assignment, (Path(__file__).resolve().parents[1], root))
    if recorded.RECORDING:
        recorded.record(assignment, found)
        pytest.skip(f"recorded {len(found)} results")
    assert recorded.differences(assignment, found, whole=True) == []


@pytest.mark.parametrize("assignment", COURSES)
def test_every_check_fails_on_some_wrong_solution(assignment):
    """No check that cannot fail: each is declared to fail by at least one wrong entry (whose declaration
    the batch above verifies), and the corpus covers wrong, degenerate and alternative solutions."""
    declared = {c for e in entries(assignment, "wrong") for checks in e.data["FAILS"].values() for c in checks}
    checks = {c.name for e in ASSIGNMENTS[assignment].exercises for c in e.checks}
    assert checks - declared == set()
    assert all(entries(assignment, kind) for kind in KINDS)
    assert len(all_entries(assignment)) >= 20


@pytest.mark.parametrize("assignment", COURSES)
def test_grade_finds_the_assignment_from_the_notebooks_metadata(assignment, releases, tmp_path):
    """A student's renamed file still names its assignment in its metadata; a file of another
    assignment graded under this one is refused, not graded against the wrong checks."""
    from grader.grading import Grader, infer_assignment
    from grader.notebook import load_submission

    renamed = tmp_path / "my homework (final).ipynb"
    shutil.copy(releases[assignment][0], renamed)
    assert infer_assignment(renamed, load_submission(renamed).assignment).id == assignment
    with Grader(backend="inprocess") as grader:
        result = grader.grade(renamed, "sequence_models")
    assert result.status == "wrong_assignment" and assignment in result.reason


def test_list_shows_every_assignment(capsys):
    from grader.cli import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for assignment, spec in ASSIGNMENTS.items():
        assert f"{assignment} ({spec.notebook}): {spec.max_score:g} points" in out
