"""A batch's fixed cost (issue 38): the batch's own process reads the assignment's outline instead of importing
its checks and torch (only its workers grade), and the released notebook's cells from the cache; a batch of one
notebook compares no code, and a larger one compares its code while its workers grade."""

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from grader.assignments import outline
from grader.assignments.registry import ASSIGNMENTS, get_assignment, get_outline
from grader.batch import similarity
from grader.cli import main


def _python(script: str, cache=None) -> list[str]:
    """What ``script`` prints in a new interpreter, split into words (``cache``: its own cache folder, and none of
    this process's environment)."""
    env = None if cache is None else {"PATH": "/usr/bin:/bin", "SEQGRADE_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def _outline_in_new_process(assignment: str, cache) -> list[str]:
    """Whether a new process that asks for the outline imports torch, and what its first check's function is."""
    return _python(
        "import sys; from grader.assignments.registry import get_outline; "
        f"a = get_outline({assignment!r}); print('torch' in sys.modules, type(a.exercises[0].checks[0].func).__name__)",
        cache,
    )


def _folder(tmp_path, *notebooks) -> Path:
    """A submissions folder holding a copy of each notebook (s0.ipynb, s1.ipynb, ...)."""
    folder = tmp_path / "in"
    folder.mkdir()
    for i, notebook in enumerate(notebooks):
        shutil.copy(notebook, folder / f"s{i}.ipynb")
    return folder


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_the_outline_says_what_the_declaration_says(assignment):
    """Everything the outputs read: exercises, kinds, points, bonus, check names, docstrings (property and
    'not judged' sentences), hints, parameter names; a check or reference of the outline refuses to run."""
    real = get_assignment(assignment)
    outlined = outline.from_data(json.loads(json.dumps(outline.to_data(real))))
    assert outline.to_data(outlined) == outline.to_data(real)
    assert (outlined.max_score, outlined.bonus_points, outlined.argument_names) == (
        real.max_score,
        real.bonus_points,
        real.argument_names,
    )
    pairs = [(c, d) for e, f in zip(outlined.exercises, real.exercises) for c, d in zip(e.checks, f.checks)]
    assert pairs and all(
        (c.property, c.undecidable, c.hint, c.judges) == (d.property, d.undecidable, d.hint, d.judges) for c, d in pairs
    )
    with pytest.raises(RuntimeError, match="only outlined"):
        pairs[0][0].func(None)


def _declared(assignment: str) -> str:
    """The type of the first check of the assignment's declaration (a template's check is a functools.partial)."""
    return type(get_assignment(assignment).exercises[0].checks[0].func).__name__


def test_a_process_reads_the_outline_another_one_wrote_and_imports_no_torch(tmp_path):
    assert _declared("attention") == "partial"  # so that the outline's own function is told apart from it
    assert _outline_in_new_process("attention", tmp_path) == ["True", _declared("attention")]  # the declaration, kept
    assert len(list(tmp_path.glob("outline-*-attention.json"))) == 1
    assert _outline_in_new_process("attention", tmp_path) == ["False", "function"]


def test_an_unreadable_outline_costs_only_the_import(tmp_path):
    _outline_in_new_process("rnn_lm", tmp_path)
    (kept,) = tmp_path.glob("outline-*-rnn_lm.json")
    kept.write_text('{"format": 1, "id": "rnn_lm", "exercises": [')  # cut short
    assert _outline_in_new_process("rnn_lm", tmp_path) == ["True", _declared("rnn_lm")]
    kept.write_text(
        json.dumps({**json.loads(json.dumps(outline.to_data(get_assignment("rnn_lm")))), "id": "attention"})
    )
    assert _outline_in_new_process("rnn_lm", tmp_path) == ["True", _declared("rnn_lm")]  # another's outline


def test_the_batch_process_imports_no_torch(released, tmp_path):
    """The batch's own process grades nothing: with the outline kept, it never imports torch or the checks."""
    folder = _folder(tmp_path, released[1])
    get_outline("sequence_models")  # this process has the declaration loaded: it keeps the outline (once per source)
    printed = _python(
        "import sys; from grader.cli import main; "
        f"rc = main(['batch', {str(folder)!r}, '--assignment', 'sequence_models', '--out', "
        f"{str(tmp_path / 'out')!r}, '--workers', '1']); "
        "print(rc, 'torch' in sys.modules, 'grader.checking.base' in sys.modules)"
    )
    assert printed[-3:] == ["0", "False", "False"]
    assert json.loads((tmp_path / "out" / "results" / "s0.json").read_text())["status"] == "graded"


def test_a_batch_writes_its_gradebook_without_importing_nbgraders_package(released, tmp_path):
    """nbgrader's package __init__ imports its Jupyter server extensions (about 0.4 s of CPU more than the gradebook's
    API alone): once the outline and the released cells are kept, a batch imports only nbgrader's API
    (grader.batch.bare_import), and its gradebook holds the student's grades."""
    folder = _folder(tmp_path, released[1])

    def batch(out: str) -> list[str]:
        return _python(
            "import sys; from grader.cli import main; "
            f"rc = main(['batch', {str(folder)!r}, '--assignment', 'sequence_models', '--out', "
            f"{str(tmp_path / out)!r}, '--workers', '1']); "
            "print(rc, 'nbgrader' in sys.modules, '_seqgrade_nbgrader.api' in sys.modules)"
        )

    batch("first")  # keeps the outline and the released cells, where no earlier test did
    assert batch("second")[-3:] == ["0", "False", "True"]
    with sqlite3.connect(tmp_path / "second" / "gradebook.db") as db:
        assert db.execute("SELECT COUNT(*) FROM grade").fetchone()[0] == len(get_outline("sequence_models").exercises)


def test_the_released_cells_are_read_back_without_nbgrader(released, tmp_path):
    """Reading a notebook's facts and the code the course gave (the similarity report's boilerplate) imports
    neither nbformat nor nbgrader once the released cells are kept: nbgrader is imported in the background for the
    gradebook, and a second thread importing it meanwhile gets a partly initialised module (ImportError)."""
    script = (
        "import sys; from grader.assignments.registry import get_outline; from grader.batch.facts import read_facts; "
        "from grader.batch.similarity import release_sources; a = get_outline('sequence_models'); "
        f"facts = read_facts({str(released[0])!r}, a); code = release_sources(a); "
        "print(facts.release_identical, len(code) > 10, 'nbgrader' in sys.modules, 'nbformat' in sys.modules)"
    )
    assert _python(script, tmp_path) == ["True", "True", "True", "True"]  # made, and kept
    assert _python(script, tmp_path) == ["True", "True", "False", "False"]


def test_a_batch_of_one_compares_no_code(released, tmp_path, monkeypatch):
    def no_release(assignment):
        raise AssertionError("the release was read to compare one notebook with nobody")

    monkeypatch.setattr(similarity, "release_sources", no_release)
    folder = _folder(tmp_path, released[1])
    assert (
        main(
            ["batch", str(folder), "--assignment", "sequence_models", "--out", str(tmp_path / "out"), "--workers", "1"]
        )
        == 0
    )
    report = json.loads((tmp_path / "out" / "similarity" / similarity.REPORT_FILE).read_text())
    assert report["students"] == 1 and report["pairs"] == []


def test_two_notebooks_are_still_compared(released, tmp_path, monkeypatch):
    read = []
    real = similarity.release_sources
    monkeypatch.setattr(similarity, "release_sources", lambda a: read.append(a) or real(a))
    folder = _folder(tmp_path, released[1], released[1])
    assert (
        main(
            ["batch", str(folder), "--assignment", "sequence_models", "--out", str(tmp_path / "out"), "--workers", "1"]
        )
        == 0
    )
    assert len(read) == 1


def test_the_similarity_report_is_compared_while_grading_and_written_even_if_that_fails(
    released, tmp_path, monkeypatch
):
    """A batch compares its notebooks' code in the background thread while its workers grade (the report depends
    on the code only); when that attempt fails, the report is written at the end, the same bytes as a batch's
    whose background attempt succeeded."""
    import threading

    from grader.batch import run as run_module

    folder = _folder(tmp_path, released[1], released[1], released[0])
    where, real = [], run_module.write_similarity

    def first_attempt_fails(*args, **kwargs):
        where.append("main" if threading.current_thread() is threading.main_thread() else "background")
        if len(where) == 1:
            raise OSError("the disk hiccupped")
        return real(*args, **kwargs)

    reports = {}
    for run, writer in (("plain", real), ("flaky", first_attempt_fails)):
        monkeypatch.setattr(run_module, "write_similarity", writer)
        out = tmp_path / run
        assert main(["batch", str(folder), "--assignment", "sequence_models", "--out", str(out), "--workers", "1"]) == 0
        reports[run] = {p.relative_to(out): p.read_bytes() for p in sorted((out / "similarity").rglob("*.*"))}
    assert where == ["background", "main"]
    assert (
        reports["flaky"] == reports["plain"]
        and json.loads(reports["plain"][Path("similarity") / similarity.REPORT_FILE])["pairs"]
    )


def test_a_row_without_a_grade_is_made_from_the_outline_without_torch(tmp_path):
    """A student whose notebook could not be graded (none handed in, an unreadable archive entry) gets the same
    all-zero result from the outline as from the declaration, and the batch's process imports no torch for it."""
    from grader.batch.record import missing_result

    real = missing_result(get_assignment("lm_modules"), "x.ipynb", "no notebook handed in")
    outlined = missing_result(
        outline.from_data(outline.to_data(get_assignment("lm_modules"))), "x.ipynb", "no notebook handed in"
    )
    assert outlined.to_dict() == real.to_dict() and real.status == "invalid"
    _outline_in_new_process("lm_modules", tmp_path)  # kept
    assert _python(
        "import sys; from grader.assignments.registry import get_outline; from grader.batch.record import "
        "missing_result; r = missing_result(get_outline('lm_modules'), 'x.ipynb', 'none'); "
        "print(r.max_score > 0, 'torch' in sys.modules)",
        tmp_path,
    ) == ["True", "False"]
