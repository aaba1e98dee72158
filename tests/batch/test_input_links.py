"""A folder input is read like a zip: a symbolic link is never graded as the student's notebook.

In an export unzipped to a folder, a notebook that is a link to a classmate's notebook or to the instructor's
solution outside the export was graded as the student's own (full marks); the same entry in a zip was refused.
"""

import json
import os

from grader.batch.entries import FILE_LINK, FOLDER_LINK
from grader.batch.identity import file_stem

from .archives import _found
from .test_batch import _batch, _rows, threads  # noqa: F401 (threads: the module's one-grader executor)


def test_a_link_in_a_folder_is_its_students_problem_not_their_notebook(tmp_path):
    outside = tmp_path / "instructor" / "solution.ipynb"
    outside.parent.mkdir()
    outside.write_text('{"who": "instructor"}')
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ada.ipynb").write_text('{"who": "ada"}')
    (subs / "bob.ipynb").symlink_to(subs / "ada.ipynb")  # a classmate's notebook
    (subs / "cy.ipynb").symlink_to(outside)  # the solution, outside the export
    (subs / "dee.ipynb").symlink_to(tmp_path / "nowhere.ipynb")  # a dangling link
    os.mkfifo(subs / "eve.ipynb")  # reading a pipe would wait for ever
    jobs, skipped, unreadable, _ = _found(subs)
    assert jobs == {"ada": b'{"who": "ada"}'}  # today bob and cy were graded as ada's and the instructor's
    assert unreadable == {"bob": FILE_LINK, "cy": FILE_LINK, "dee": FILE_LINK, "eve": unreadable["eve"]}
    assert unreadable["eve"].startswith("the file is not a plain file")
    assert skipped == {
        "bob.ipynb": FILE_LINK,
        "cy.ipynb": FILE_LINK,
        "dee.ipynb": FILE_LINK,
        "eve.ipynb": unreadable["eve"],
    }


def test_a_link_to_a_folder_is_listed_not_followed_nor_silently_dropped(tmp_path):
    tree = tmp_path / "course" / "submitted"
    (tree / "ada" / "sequence_models").mkdir(parents=True)
    (tree / "ada" / "sequence_models" / "sequence_models.ipynb").write_text('{"who": "ada"}')
    (tree / "bob").symlink_to(tree / "ada", target_is_directory=True)  # bob's folder is ada's
    jobs, skipped, unreadable, found = _found(tmp_path / "course")
    assert found.layout == "nbgrader" and jobs == {"ada": b'{"who": "ada"}'} and not unreadable
    assert skipped == {"submitted/bob": f"not a notebook (.ipynb); {FOLDER_LINK}"}  # today: not a word


def test_a_linked_notebook_gets_an_invalid_row_that_says_why(released, tmp_path, threads):  # noqa: F811
    """The reason is in grades.csv, the results JSON and the feedback page."""
    solution = tmp_path / "instructor" / "sequence_models.ipynb"
    solution.parent.mkdir()
    solution.write_bytes(released[1].read_bytes())
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "bob.ipynb").symlink_to(solution)
    report = _batch(subs, tmp_path / "out", threads)  # today: 25/25, graded as bob's
    rows = _rows(tmp_path / "out")
    assert rows["bob"]["status"] == "invalid" and float(rows["bob"]["total"]) == 0
    assert rows["bob"]["reason"] == FILE_LINK and dict(report.skipped) == {"bob.ipynb": FILE_LINK}
    stored = json.loads((tmp_path / "out" / "results" / f"{file_stem('bob')}.json").read_text())
    assert stored["status"] == "invalid" and stored["reason"] == FILE_LINK
    page = (tmp_path / "out" / "feedback" / f"{file_stem('bob')}.html").read_text()
    assert "symbolic link" in page


def test_a_students_own_notebook_beside_a_link_is_graded_and_the_link_named(tmp_path):
    folder = tmp_path / "course" / "submitted" / "ada" / "sequence_models"
    folder.mkdir(parents=True)
    (folder / "sequence_models.ipynb").write_text('{"who": "ada"}')
    (tmp_path / "solution.ipynb").write_text('{"who": "instructor"}')
    (folder / "zz.ipynb").symlink_to(tmp_path / "solution.ipynb")  # sorts last, and is the newest file
    jobs, skipped, unreadable, found = _found(tmp_path / "course")
    assert jobs == {"ada": b'{"who": "ada"}'} and not unreadable  # today the link was graded
    assert skipped == {
        "submitted/ada/sequence_models/zz.ipynb": "duplicate for student ada; graded "
        f"submitted/ada/sequence_models/sequence_models.ipynb instead: {FILE_LINK}"
    }
    assert "graded sequence_models.ipynb; not graded: zz.ipynb (the file is a symbolic link" in found.jobs[0].chosen
