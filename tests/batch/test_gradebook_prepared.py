"""What the gradebook holds before any result (its tables, the assignment, its notebook and grade cells, the batch's
students' submissions) is written
while the batch grades, by the thread that imports nbgrader (grader.batch.nbgrader_import): the finished gradebook
holds the same rows as one written at the end alone, and a step of that thread that waits for nbgrader's import
does not wait for itself."""

import json
import sqlite3
import threading

from grader.assignments.registry import get_outline
from grader.batch import nbgrader_import, outputs
from grader.results import NotebookResult


def _rows(db) -> dict[str, list]:
    """Every table's rows, without the ids nbgrader draws at random."""
    with sqlite3.connect(db) as connection:
        tables = [t for (t,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        found = {}
        for table in tables:
            cursor = connection.execute(f"SELECT * FROM {table}")
            names = [d[0] for d in cursor.description]
            keep = [i for i, n in enumerate(names) if n != "id" and not n.endswith("_id")]
            found[table] = sorted(repr([row[i] for i in keep]) for row in cursor)
        return found


def test_a_gradebook_prepared_ahead_ends_with_the_same_rows(released, tmp_path):
    from grader.grading import Grader

    assignment = get_outline("sequence_models")
    with Grader() as grader:
        result = grader.grade(released[1], "sequence_models")
    results = {"ann": NotebookResult.from_dict(json.loads(json.dumps(result.to_dict()))), "bob": result}
    plain, prepared = tmp_path / "plain.db", tmp_path / "prepared.db"
    outputs.write_gradebook(f"sqlite:///{plain}", assignment, results)
    outputs.prepare_gradebook(f"sqlite:///{prepared}", assignment)
    ahead = _rows(prepared)
    assert len(ahead["grade_cells"]) == len(assignment.exercises) and not ahead["submitted_assignment"]
    outputs.write_gradebook(f"sqlite:///{prepared}", assignment, results)
    assert _rows(prepared) == _rows(plain) and len(_rows(plain)["grade"]) == 2 * len(assignment.exercises)
    # With the batch's students too: their submissions and grade rows are made ahead, the scores filled in at the end.
    with_rows = tmp_path / "with_rows.db"
    outputs.prepare_gradebook(f"sqlite:///{with_rows}", assignment, ["bob", "ann"])
    ahead = _rows(with_rows)
    assert len(ahead["submitted_assignment"]) == 2 and len(ahead["grade"]) == 2 * len(assignment.exercises)
    assert ahead != _rows(plain)  # no score yet
    with sqlite3.connect(with_rows) as connection:  # a batch stopped here shows them as not graded yet, not as 0
        assert {flag for (flag,) in connection.execute("SELECT needs_manual_grade FROM grade")} == {1}
    outputs.write_gradebook(f"sqlite:///{with_rows}", assignment, results)
    assert _rows(with_rows) == _rows(plain)


def test_a_step_of_the_background_thread_that_waits_for_nbgraders_import_does_not_wait_for_itself():
    waited = threading.Event()
    thread = nbgrader_import.prefetch_gradebook(warm=[lambda: (nbgrader_import.nbgrader_imported(), waited.set())])
    thread.join(timeout=60)  # nbgrader imports in about 2 s
    assert waited.is_set() and not thread.is_alive()
    nbgrader_import.background_done()


_WRITE = """
import json, sys
{first}
from grader.assignments.registry import get_outline
from grader.batch import outputs
from grader.results import NotebookResult
results = {{s: NotebookResult.from_dict(r) for s, r in json.load(open(sys.argv[1])).items()}}
outputs.write_gradebook("sqlite:///" + sys.argv[2], get_outline("sequence_models"), results)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("nbgrader", "jupyter_server", "notebook_shim"))))
"""


def test_the_gradebook_is_written_without_nbgraders_package_init_and_holds_the_same_rows(released, tmp_path):
    """A batch imports nbgrader's gradebook API (nbgrader.api) without nbgrader's __init__, which imports its
    Jupyter server extensions (grader.batch.bare_import): nothing of that is loaded, and the gradebook holds the
    same rows as one written where nbgrader was imported as usual."""
    import subprocess
    import sys

    from grader.grading import Grader

    with Grader() as grader:
        result = grader.grade(released[1], "sequence_models").to_dict()
    (tmp_path / "results.json").write_text(json.dumps({"ann": result, "bob": result}))
    loaded = {}
    for how, first in (("bare", ""), ("usual", "import nbgrader.api")):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                _WRITE.format(first=first),
                str(tmp_path / "results.json"),
                str(tmp_path / f"{how}.db"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        loaded[how] = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded["bare"] == [], loaded["bare"]  # nbgrader's package (and the server it extends) never imported
    assert "nbgrader" in loaded["usual"] and "nbgrader.server_extensions" in loaded["usual"]
    assert _rows(tmp_path / "bare.db") == _rows(tmp_path / "usual.db")
    assert len(_rows(tmp_path / "bare.db")["grade"]) == 2 * len(get_outline("sequence_models").exercises)


def test_the_gradebook_api_is_one_module_for_the_whole_process():
    """Once a process has nbgrader's API, it keeps that module even after nbgrader itself is imported (two
    copies of its tables' classes never mix in one process)."""
    import subprocess
    import sys

    script = """
import json, sys
from grader.batch.nbgrader_import import nbgrader_api
first = nbgrader_api()
import nbgrader.api
print(json.dumps([first.__name__, nbgrader_api() is first, first.__file__ == nbgrader.api.__file__]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    name, same, same_file = json.loads(done.stdout.strip().splitlines()[-1])
    assert name == "_seqgrade_nbgrader.api" and same and same_file
