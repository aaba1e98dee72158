"""A batch's fixed cost (issue 38): its workers start loading the grader before the parent imports torch, only
when some notebook needs grading, and a batch of one notebook compares no code."""
import json
import shutil
import subprocess
import sys

from grader.batch import similarity
from grader.batch.inputs import discover
from grader.batch.pool import started_workers, to_grade
from grader.cli import main
from grader.jail.limits import Limits


def test_the_pool_module_imports_no_torch():
    """grader.batch.pool runs before the parent's heavy imports: importing it must not pull torch in."""
    code = "import sys, grader.batch.pool; print('torch' in sys.modules, 'grader.checking.exercise' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_workers_start_only_for_notebooks_that_need_grading(released, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("ada", "bob"):
        shutil.copy(released[1], folder / f"{name}.ipynb")
    jobs = discover(folder, "sequence_models").jobs
    out = tmp_path / "out"
    assert to_grade(jobs, "sequence_models", Limits(), out) == 2  # nothing stored yet
    assert main(["batch", str(folder), "--assignment", "sequence_models", "--out", str(out), "--workers", "1"]) == 0
    assert to_grade(jobs, "sequence_models", Limits(), out) == 0  # a rerun reuses both
    assert started_workers(jobs, "sequence_models", Limits(), out) is None
    assert to_grade(jobs, "sequence_models", Limits(cell_cpu_s=5), out) == 2  # other limits: graded again
    nb = json.loads((folder / "bob.ipynb").read_text())
    nb["cells"].append({"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": None,
                        "id": "extra"})
    (folder / "bob.ipynb").write_text(json.dumps(nb))
    assert to_grade(jobs, "sequence_models", Limits(), out) == 1  # bob changed his notebook


def test_a_batch_of_one_compares_no_code(released, tmp_path, monkeypatch):
    def no_release(assignment):
        raise AssertionError("the release was read to compare one notebook with nobody")

    monkeypatch.setattr(similarity, "release_sources", no_release)
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(released[1], folder / "ada.ipynb")
    assert main(["batch", str(folder), "--assignment", "sequence_models", "--out", str(tmp_path / "out"),
                 "--workers", "1"]) == 0
    report = json.loads((tmp_path / "out" / "similarity" / similarity.REPORT_FILE).read_text())
    assert report["students"] == 1 and report["pairs"] == []


def test_two_notebooks_are_still_compared(released, tmp_path, monkeypatch):
    read = []
    real = similarity.release_sources
    monkeypatch.setattr(similarity, "release_sources", lambda a: read.append(a) or real(a))
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(2):
        shutil.copy(released[1], folder / f"s{i}.ipynb")
    assert main(["batch", str(folder), "--assignment", "sequence_models", "--out", str(tmp_path / "out"),
                 "--workers", "1"]) == 0
    assert len(read) == 1
