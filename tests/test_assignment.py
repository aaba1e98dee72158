"""The sequence_models assignment: the source notebook, its release, and nbgrader compatibility."""

import re
import shutil

import nbformat
import pytest
from nbclient import NotebookClient
from nbgrader.utils import determine_grade

from grader.assignments.registry import SEQUENCE_MODELS
from grader.course.release import ASSIGNMENTS_ROOT
from grader.grading import Grader
from grader.notebook import grade_id as _grade_id
from grader.notebook import nbgrader_meta

from .nbgrader_course import generated

SOURCE_DIR = ASSIGNMENTS_ROOT / "source" / "sequence_models"
SOURCE = SOURCE_DIR / "sequence_models.ipynb"


class _Log:
    def warning(self, *args):
        pass


def _execute(nb, cwd, allow_errors=False):
    NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=allow_errors, resources={"metadata": {"path": str(cwd)}}
    ).execute()
    return nb


def test_solution_cells_are_named_for_what_they_define():
    nb = nbformat.read(SOURCE, as_version=4)
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution") and cell.cell_type == "code":
            defined = re.findall(r"^(?:def (\w+)|(\w+) =)", cell.source, re.MULTILINE)
            assert meta["grade_id"] in {a or b for a, b in defined}, meta["grade_id"]


def test_source_notebook_runs_and_every_autograded_cell_scores_full_points(tmp_path):
    work = shutil.copytree(SOURCE_DIR, tmp_path / "work")
    nb = _execute(nbformat.read(SOURCE, as_version=4), work)
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if meta.get("grade") and cell.cell_type == "code":
            auto, _ = determine_grade(cell, _Log())
            assert auto == meta["points"], (meta["grade_id"], cell.outputs)
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error" and out.get("name") != "stderr", out
    selfchecks = [c for c in nb.cells if (_grade_id(c) or "").startswith("selfcheck_")]
    assert selfchecks and all("".join(o.get("text", "") for o in c.outputs).startswith("[ok] ") for c in selfchecks)


def test_release_stubs_raise_and_their_self_checks_fail_as_not_implemented(released, tmp_path):
    work = shutil.copytree(released[0].parent, tmp_path / "work")
    nb = _execute(nbformat.read(work / "sequence_models.ipynb", as_version=4), work, allow_errors=True)
    answers = {e.id for e in SEQUENCE_MODELS.exercises if e.kind == "answer"}
    selfchecks = 0
    for cell in nb.cells:
        gid = _grade_id(cell) or ""
        if gid in answers:  # answer cells are stubs that raise when run
            errors = [o for o in cell.outputs if o.output_type == "error"]
            assert errors and errors[0].ename == "NotImplementedError", gid
        if gid.startswith("selfcheck_"):  # function stubs raise when the self-check calls them: the cell fails
            selfchecks += 1
            errors = [o for o in cell.outputs if o.output_type == "error"]
            assert [e.ename for e in errors] == ["NotImplementedError"], gid
            assert "not implemented yet" in errors[0].evalue, (gid, errors[0].evalue)
    assert selfchecks == 8


def _solution_lines(nb):
    for cell in nb.cells:
        inside = False
        for line in cell.source.splitlines():
            if "### BEGIN SOLUTION" in line or "### BEGIN HIDDEN TESTS" in line:
                inside = True
            elif "### END SOLUTION" in line or "### END HIDDEN TESTS" in line:
                inside = False
            elif inside and len(line.strip()) > 12:
                yield line.strip()


def test_release_contains_no_solution_answer_key_or_hidden_test(released):
    source = nbformat.read(SOURCE, as_version=4)
    secrets = set(_solution_lines(source))
    secrets |= {
        "BEGIN HIDDEN TESTS",
        "nbgrader_hook",
        "BEGIN SOLUTION",
        "import grader",
        "from reference",
        "answers.py",
    }
    secrets |= {f'{k} = "B"' for k in ("CAUSAL_MASK_CHOICE",)} | {
        "QKV_PARAM_COUNT = 300",
        "SELF_ATTENTION_IS_CAUSAL = False",
    }
    assert len(secrets) > 30
    files = [p for p in released[0].parent.rglob("*") if p.is_file()]
    assert {p.name for p in files} == {"sequence_models.ipynb", "selfcheck.py", "selfcheck_base.py"}
    for path in files:
        text = path.read_text()
        leaks = [s for s in secrets if s in text]
        assert not leaks, (path.name, leaks[:3])


def test_release_writes_nothing_into_the_course_folder(tmp_path):
    from grader.course.release import release

    before = sorted(str(p) for p in ASSIGNMENTS_ROOT.rglob("*") if "__pycache__" not in p.parts)
    release("sequence_models", tmp_path)
    release("sequence_models", tmp_path / "sol", solutions=True)
    assert sorted(str(p) for p in ASSIGNMENTS_ROOT.rglob("*") if "__pycache__" not in p.parts) == before


def test_solution_version_keeps_solutions_without_markers(released):
    text = released[1].read_text()
    assert "BEGIN SOLUTION" not in text and "HIDDEN" not in text
    assert "np.linalg.pinv(A)" in text


@pytest.mark.slow
def test_nbgrader_generate_and_autograde_agree_with_seqgrade(tmp_path, released):
    course, _ = generated("sequence_models", tmp_path / "course")
    release_nb = course.root / "release" / "sequence_models" / "sequence_models.ipynb"
    partial = nbformat.read(released[1], as_version=4)
    for cell in partial.cells:
        if _grade_id(cell) == "seq2col":
            cell.source = (
                "def seq2col(seq, filter_size):\n    seq = np.asarray(seq)\n"
                "    return np.stack([seq[i:i+filter_size] for i in range(len(seq)-filter_size)]), seq[:-filter_size]"
            )
        if _grade_id(cell) == "forward":
            cell.source = (
                "def forward(seqs, Wrec, Win, Wout):\n    outs = []\n    for b in range(seqs.shape[0]):\n"
                "        h = torch.zeros(Wrec.shape[0], dtype=seqs.dtype)\n        for t in range(seqs.shape[1]):\n"
                "            h = recurrent_unit(seqs[b, t], h, Wrec, Win)\n        outs.append(h @ Wout[:, 0])\n"
                "    return torch.stack(outs)"
            )
    submissions = {"alice": released[1].read_text(), "bob": release_nb.read_text(), "carol": nbformat.writes(partial)}
    for student, text in submissions.items():
        folder = course.root / "submitted" / student / "sequence_models"
        folder.mkdir(parents=True)
        (folder / "sequence_models.ipynb").write_text(text)
        for helper in ("selfcheck.py", "selfcheck_base.py"):
            shutil.copy(course.root / "release" / "sequence_models" / helper, folder)
    course.nbgrader("autograde", "sequence_models")
    from nbgrader.api import Gradebook

    auto_max = sum(e.points for e in SEQUENCE_MODELS.exercises if e.kind != "manual")
    with Grader() as grader, Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gb:
        for student in submissions:
            sub = gb.find_submission_notebook("sequence_models", "sequence_models", student)
            nbgrader_scores = {g.name: g.auto_score for g in sub.grades if g.name.startswith("test_")}
            ours = grader.grade(course.root / "submitted" / student / "sequence_models" / "sequence_models.ipynb")
            assert nbgrader_scores == {
                f"test_{e.id}": e.score for e in ours.exercises if e.id != "ar_fit_interpretation"
            }, student
            total = sum(nbgrader_scores.values())
            assert total == {"alice": auto_max, "bob": 0, "carol": auto_max - 2 - 1}[student], (
                student,
                nbgrader_scores,
            )
