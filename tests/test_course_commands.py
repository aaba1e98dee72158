"""The instructor's commands on the course: `release --all`, `sync-points` and `new-exercise`'s refusals (the
authoring guide's test runs new-exercise and sync-points on a worked example end to end)."""

import shutil

import nbformat
import pytest

from grader.assignments.registry import ASSIGNMENTS
from grader.cli import main
from grader.course.release import ASSIGNMENTS_ROOT
from grader.course.scaffold import ScaffoldError, add_exercise_cells, sync_points
from grader.notebook import grade_id


def test_release_all_writes_both_versions_of_every_assignment_in_folders_apart(tmp_path, capsys):
    out, solutions = tmp_path / "release", tmp_path / "solutions"
    assert main(["release", "--all", "--out", str(out), "--solutions-out", str(solutions)]) == 0
    for assignment, spec in ASSIGNMENTS.items():
        student = (out / assignment / spec.notebook).read_text()
        solution = (solutions / assignment / spec.notebook).read_text()
        assert "BEGIN SOLUTION" not in student and "BEGIN SOLUTION" not in solution and student != solution
    assert capsys.readouterr().out.count("student version in") == len(ASSIGNMENTS)


@pytest.mark.parametrize(
    "args, said",
    [
        (["--all", "--out", "r"], "give --solutions-out DIR"),
        (["--all", "--out", "r", "--solutions-out", "r/solutions"], "need folders apart"),
        (["--all", "rnn_lm", "--out", "r", "--solutions-out", "s"], "give no ASSIGNMENT"),
        (["--out", "r"], "name an ASSIGNMENT"),
        (["rnn_lm", "--out", "r", "--solutions-out", "s"], "--solutions-out goes with --all"),
    ],
)
def test_release_refuses_what_would_mix_or_lose_versions(args, said, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["release", *args]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "r" / "rnn_lm").exists()


def _course(tmp_path):
    root = tmp_path / "assignments"
    shutil.copytree(ASSIGNMENTS_ROOT, root, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    return root, root / "source" / "rnn_lm" / "rnn_lm.ipynb"


def test_sync_points_restates_every_point_from_the_declaration(tmp_path):
    root, path = _course(tmp_path)
    assert not sync_points("rnn_lm", write=False, root=root).changed  # the course as it is agrees
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        gid = grade_id(cell)
        if gid == "test_lstm_cell":
            cell.metadata.nbgrader["points"] = 4.0
            cell.source = cell.source.replace("(6 points)", "(4 points)")
    nb.cells[0].source = nb.cells[0].source.replace("(38 points)", "(36 points)")
    nb.cells[2].source = nb.cells[2].source.replace("(6 points)", "(4 points)")
    nbformat.write(nb, path)
    checked = sync_points("rnn_lm", write=False, root=root)
    assert len(checked.changed) == 4 and nbformat.read(path, as_version=4) == nb  # --check writes nothing
    fixed = sync_points("rnn_lm", root=root)
    assert fixed.changed == checked.changed and "test_lstm_cell: 4.0 -> 6 points" in fixed.changed
    assert path.read_bytes() == (ASSIGNMENTS_ROOT / "source" / "rnn_lm" / "rnn_lm.ipynb").read_bytes()


def test_new_exercise_refuses_an_undeclared_exercise_or_one_with_cells(tmp_path, capsys):
    root, _ = _course(tmp_path)
    with pytest.raises(ScaffoldError, match="declares no exercise 'gru_cell'"):
        add_exercise_cells("rnn_lm", "gru_cell", root=root)
    with pytest.raises(ScaffoldError, match="already has cells for lstm_cell"):
        add_exercise_cells("rnn_lm", "lstm_cell", root=root)
    assert main(["new-exercise", "nope", "x"]) == 2 and "unknown assignment 'nope'" in capsys.readouterr().err


def test_release_refuses_new_exercises_placeholders_unless_forced(tmp_path, capsys, monkeypatch):
    """An author who filled in only the solution: release names the cells still holding new-exercise's text
    (exit 2, nothing written); --force ships it and says which cells."""
    import grader.course.release as release_module

    DOCSTRING_PLACEHOLDER = "Say in one line what it returns."  # as new-exercise writes them (checked at the end)
    QUESTION_PLACEHOLDER = "**Question.** Ask it here"
    root, path = _course(tmp_path)
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if grade_id(c) == "lstm_cell")
    first, _, rest = cell.source.partition('"""')  # the docstring's own text, as new-exercise writes it
    cell.source = f'{first}"""{DOCSTRING_PLACEHOLDER}"""{rest.partition(chr(34) * 3)[2]}'
    nb.cells.insert(
        3, nbformat.v4.new_markdown_cell(f"{QUESTION_PLACEHOLDER}, and say what type `X` must have.", id="md-x")
    )
    nbformat.write(nb, path)
    monkeypatch.setattr(release_module, "ASSIGNMENTS_ROOT", root)
    for args in (
        ["rnn_lm", "--out", str(tmp_path / "r")],
        ["--all", "--out", str(tmp_path / "r"), "--solutions-out", str(tmp_path / "s")],
    ):
        assert main(["release", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "placeholder text seqgrade new-exercise wrote" in err and "--force" in err
        assert args[0] != "rnn_lm" or f"cell lstm_cell: {DOCSTRING_PLACEHOLDER!r}" in err and "cell md-x" in err
        assert (
            not (tmp_path / "r").exists() and not (tmp_path / "s").exists()
        )  # --all: checked before anything is written
    assert main(["release", "rnn_lm", "--out", str(tmp_path / "r"), "--force"]) == 0
    out = capsys.readouterr().out
    assert "warning: rnn_lm.ipynb, cell lstm_cell still holds the placeholder" in out and "cell md-x" in out
    assert DOCSTRING_PLACEHOLDER in (tmp_path / "r" / "rnn_lm" / "rnn_lm.ipynb").read_text()
    from grader.course.release import PlaceholderLeft
    from grader.course.scaffold import PLACEHOLDERS

    assert {DOCSTRING_PLACEHOLDER, QUESTION_PLACEHOLDER} <= set(PLACEHOLDERS)
    with pytest.raises(PlaceholderLeft) as refused:
        release_module.release("rnn_lm", tmp_path / "again", root=root)
    assert sorted(c for c, _ in refused.value.found) == ["lstm_cell", "md-x"] and not (tmp_path / "again").exists()
