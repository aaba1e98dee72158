"""What the gradebook holds before any result (its tables, the assignment, its notebook and grade cells) is written
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


def test_a_step_of_the_background_thread_that_waits_for_nbgraders_import_does_not_wait_for_itself():
    waited = threading.Event()
    thread = nbgrader_import.prefetch_gradebook(warm=[lambda: (nbgrader_import.nbgrader_imported(), waited.set())])
    thread.join(timeout=60)  # nbgrader imports in about 2 s
    assert waited.is_set() and not thread.is_alive()
    nbgrader_import.background_done()
