"""Authoring a new assignment with `seqgrade new-exercise` (docs/authoring-exercises.md, "Adding an assignment"):
its first exercise goes under its section's heading with its real points, a written question (kind "manual") gets
its question and answer cells, sync-points keeps a heading that states a question's points apart, and a corpus
entry whose file name is not a student id is refused with a message that says why (issue 49, item 3)."""

import re

import nbformat
import pytest

import grader.assignments.registry as registry
from grader.checking.exercise import Assignment, Check, Exercise
from grader.course.release import placeholders_left, release
from grader.course.scaffold import add_exercise_cells, sync_points

IMPORTS = {"grade": False, "grade_id": "imports", "locked": True, "schema_version": 3, "solution": False}


def check_double_values(student):
    """double(x) is 2 * x.

    Always judged."""


def double(x):
    return 2 * x


def toy(question_points: float = 1.5) -> Assignment:
    return Assignment(
        id="toy",
        notebook="toy.ipynb",
        modules=("selfcheck",),
        exercises=(
            Exercise("double", "function", (Check(check_double_values, 2.0),), reference=double),
            Exercise("why_double", "manual", manual_points=question_points),
        ),
    )


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course root whose new assignment `toy` is declared as ``toy()`` and whose notebook is started as the guide
    says: an introduction, the imports cell, then the markdown cells given (section headings written ahead)."""
    monkeypatch.setattr(registry, "get_assignment", lambda assignment_id: toy())
    folder = tmp_path / "source" / "toy"
    folder.mkdir(parents=True)
    (folder / "selfcheck.py").write_text("def check_double(double):\n    pass\n")

    def start(*headings: str):
        nb = nbformat.v4.new_notebook(metadata={"seqgrade": {"assignment": "toy"}})
        nb.cells = [
            nbformat.v4.new_markdown_cell("# Doubling\n\nThis assignment (0 points) doubles.", id="intro"),
            nbformat.v4.new_code_cell("import selfcheck", id="imports", metadata={"nbgrader": IMPORTS}),
            *(nbformat.v4.new_markdown_cell(h, id=f"section-{i}") for i, h in enumerate(headings, 1)),
        ]
        nbformat.write(nb, folder / "toy.ipynb")

    return tmp_path, folder / "toy.ipynb", start


def _order(path) -> list[str]:
    return [c.id for c in nbformat.read(path, as_version=4).cells]


def _cell(path, cell_id: str):
    return next(c for c in nbformat.read(path, as_version=4).cells if c.id == cell_id)


def test_a_first_exercise_goes_under_its_heading_with_its_points(course):
    root, path, start = course
    start("## 1. Doubling (0 points)\n\nWhat doubling is.")
    report = add_exercise_cells("toy", "double", root=root)
    assert _order(path) == ["intro", "imports", "section-1", "md-double", "double", "selfcheck-double", "test-double"]
    assert _cell(path, "section-1").source.startswith("## 1. Doubling (2 points)")
    assert "under the heading '## 1. Doubling (0 points)'" in report.changed[0]
    assert _cell(path, "intro").source == "# Doubling\n\nThis assignment (3.5 points) doubles."  # as declared
    assert not [n for n in report.notes if "points" in n], report.notes


def test_a_first_exercise_without_a_heading_gets_one_to_name(course):
    from grader.course.placeholders import SECTION_PLACEHOLDER

    root, path, start = course
    start()
    report = add_exercise_cells("toy", "double", root=root)
    assert _order(path)[:3] == ["intro", "imports", "md-double"]
    assert _cell(path, "md-double").source.startswith(f"## 1. {SECTION_PLACEHOLDER} (2 points)\n\n**Exercise.**")
    assert "under a new heading" in report.changed[0]
    cells = dict(placeholders_left(nbformat.read(path, as_version=4)))
    assert SECTION_PLACEHOLDER in cells.values()  # release refuses it until the section is named


def test_a_section_written_ahead_keeps_its_heading_until_its_exercise_comes(course):
    """A heading with no exercise under it yet is neither given "(0 points)" nor passed over: the next exercise
    declared goes under it, and then it states that exercise's points."""
    root, path, start = course
    start("## 1. Doubling (2 points)", "## 2. Why (3 points)")
    first = add_exercise_cells("toy", "double", root=root)
    assert _order(path)[2:4] == ["section-1", "md-double"] and _order(path)[-1] == "section-2"
    assert _cell(path, "section-2").source == "## 2. Why (3 points)"
    assert any("'## 2. Why (3 points)' has no exercise under it yet" in n for n in first.notes), first.notes
    second = add_exercise_cells("toy", "why_double", root=root)
    assert _order(path)[-3:] == ["section-2", "md-why_double", "why_double"]
    assert _cell(path, "section-2").source == "## 2. Why (1.5 points)" and not second.notes


def test_a_written_question_gets_its_question_and_answer_cells(course, tmp_path):
    from grader.course.placeholders import MODEL_ANSWER_PLACEHOLDER

    root, path, start = course
    start("## 1. Doubling (0 points)")
    add_exercise_cells("toy", "double", root=root)
    report = add_exercise_cells("toy", "why_double", root=root)
    assert _order(path)[-2:] == ["md-why_double", "why_double"]
    question, answer = _cell(path, "md-why_double"), _cell(path, "why_double")
    assert question.cell_type == answer.cell_type == "markdown" and "manually graded" in question.source
    assert answer.metadata.nbgrader == {
        "grade": True,
        "grade_id": "why_double",
        "locked": False,
        "points": 1.5,
        "schema_version": 3,
        "solution": True,
    }
    assert answer.source == f"### BEGIN SOLUTION\n{MODEL_ANSWER_PLACEHOLDER}\n### END SOLUTION"
    assert "heading '## 1. Doubling (2 points)' -> '## 1. Doubling (3.5 points)'" in report.changed
    assert "3.5 points" in _cell(path, "intro").source
    # once written, nbgrader releases it as a manually graded answer: the model answer only in the solution
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.source = cell.source.replace(MODEL_ANSWER_PLACEHOLDER, "Twice x is x + x.")
        if cell.id in ("md-double", "md-why_double", "double"):
            cell.source = re.sub(
                r"Write .*|Ask the question here.*|Say in one line what it returns\.", "Do it.", cell.source
            )
    nbformat.write(nb, path)
    assert placeholders_left(nb) == []
    student = nbformat.read(release("toy", tmp_path / "out", root=root) / "toy.ipynb", as_version=4)
    solution = nbformat.read(release("toy", tmp_path / "sol", root=root, solutions=True) / "toy.ipynb", as_version=4)
    assert next(c for c in student.cells if c.id == "why_double").source == "YOUR ANSWER HERE"
    assert next(c for c in solution.cells if c.id == "why_double").source.strip() == "Twice x is x + x."


def test_sync_points_keeps_a_questions_points_stated_apart(course, monkeypatch):
    root, path, start = course
    start("## 1. Doubling (0 points)")
    add_exercise_cells("toy", "double", root=root)
    add_exercise_cells("toy", "why_double", root=root)
    nb = nbformat.read(path, as_version=4)
    nb.cells[2].source = "## 1. Doubling (2 points, and 1.5 for the question)"
    nbformat.write(nb, path)
    assert not sync_points("toy", root=root).changed  # the two numbers add up: nothing to change
    monkeypatch.setattr(registry, "get_assignment", lambda assignment_id: toy(question_points=2.0))
    report = sync_points("toy", root=root)  # the question's own number moved: said, not guessed
    assert not [c for c in report.changed if c.startswith("heading")], report.changed
    assert any("state them as '(4 points)'" in n for n in report.notes), report.notes
    monkeypatch.setattr(
        registry,
        "get_assignment",
        lambda assignment_id: Assignment(
            id="toy",
            notebook="toy.ipynb",
            modules=("selfcheck",),
            exercises=(
                Exercise("double", "function", (Check(check_double_values, 3.0),), reference=double),
                Exercise("why_double", "manual", manual_points=1.5),
            ),
        ),
    )
    report = sync_points("toy", root=root)
    assert (
        "heading '## 1. Doubling (2 points, and 1.5 for the question)' -> '## 1. Doubling (3 points, and 1.5 "
        "for the question)'" in report.changed
    )


def test_a_corpus_entry_whose_name_is_not_a_student_id_is_refused_and_told_why(tmp_path, monkeypatch):
    """Its file name is the student id its result is filed under: `Gru_Float32` would be written as
    `wrong-gru_float32~<digest>.json`, which the corpus tests do not look for ("the batch lost its grade")."""
    from grader.batch.identity import file_stem
    from tests.corpus import build, courses

    folder = tmp_path / "corpus" / "courses" / "toy" / "wrong"
    folder.mkdir(parents=True)
    (folder / "doubles_twice.py").write_text('"""Doubles twice."""\nREPLACE = {}\nFAILS = {}\n')
    monkeypatch.setattr(courses, "HERE", tmp_path / "corpus" / "courses")
    monkeypatch.setattr(build, "HERE", tmp_path / "corpus")
    assert [e.name for e in courses.entries("toy", "wrong")] == ["doubles_twice"]
    assert all(file_stem(student) == student for student in courses.all_entries("toy"))
    (folder / "Gru_Float32.py").write_text('"""Computes in float32."""\nREPLACE = {}\nFAILS = {}\n')
    with pytest.raises(courses.EntryNameError) as refused:
        courses.entries("toy", "wrong")
    said = str(refused.value)
    assert "Gru_Float32.py" in said and "'wrong-Gru_Float32'" in said and "not a plain id" in said, said
    assert "Rename the file, e.g. to gru_float32.py" in said and file_stem("wrong-Gru_Float32") in said, said
