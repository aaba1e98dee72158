"""Work a batch does once per notebook is done once: an LMS archive is unpacked once, and each new notebook's
result and feedback page are written once."""

from __future__ import annotations

import zipfile
from collections import Counter
from pathlib import Path

from grader.batch import inputs, outputs, run
from grader.cli import main
from grader.results import NotebookResult


def _canvas_export(solution: Path, dest: Path) -> Path:
    """A Canvas export of two students: the solution twice under Canvas's file names."""
    with zipfile.ZipFile(dest, "w") as zf:
        for i in range(2):
            zf.writestr(f"student{i}_{1000 + i}_{5000 + i}_sequence_models.ipynb", solution.read_bytes())
    return dest


def test_an_export_is_unpacked_once_and_each_result_and_page_written_once(released, tmp_path, monkeypatch):
    """Also made once: each result's JSON (serialized as it comes in, not again at the end for an equal result)
    and each page (rendered as the result comes in, from the result the end shows)."""
    discovered, written, made = [], Counter(), Counter()
    real_discover, real_write = inputs.discover, outputs.write_atomic
    real_to_dict, real_render = NotebookResult.to_dict, outputs.render

    def to_dict(self):
        made["json"] += 1
        return real_to_dict(self)

    def render(result):
        made["page"] += 1
        return real_render(result)

    def discover(*args, **kw):
        discovered.append(args)
        return real_discover(*args, **kw)

    def write_atomic(path, data):
        written[Path(path).relative_to(tmp_path / "out").as_posix()] += 1
        return real_write(path, data)

    monkeypatch.setattr(inputs, "discover", discover)
    monkeypatch.setattr(run, "discover", discover)
    monkeypatch.setattr(outputs, "write_atomic", write_atomic)
    monkeypatch.setattr(NotebookResult, "to_dict", to_dict)
    monkeypatch.setattr(outputs, "render", render)
    export = _canvas_export(released[1], tmp_path / "export.zip")
    assert (
        main(
            ["batch", str(export), "--assignment", "sequence_models", "--out", str(tmp_path / "out"), "--workers", "1"]
        )
        == 0
    )
    assert len(discovered) == 1
    per_student = {name: n for name, n in written.items() if name.startswith(("results/", "feedback/"))}
    assert len(per_student) == 4 and set(per_student.values()) == {1}, per_student
    assert made == {"json": 2, "page": 2}, made


def test_an_end_result_that_differs_is_written_again(tmp_path):
    """What ``Written`` remembers saves work only for an equal result: a staff mark or a flag added between a
    result's arrival and the batch's end rewrites its JSON and its page."""
    from dataclasses import replace

    from grader.results import NotebookResult as Result

    result = Result(assignment="sequence_models", notebook="a.ipynb", status="graded", exercises=())
    seen = outputs.Written()
    outputs.write_result(tmp_path, "ann", result, "k", page=False, written=seen)
    outputs.write_page(tmp_path, "ann", result, seen)
    json_path, page_path = tmp_path / "results" / "ann.json", tmp_path / "feedback" / "ann.html"
    json_path.write_text("stale")  # so that a skipped write shows
    page_path.write_text("stale")
    outputs.write_result(tmp_path, "ann", result, "k", written=seen)
    assert json_path.read_text() == "stale" and page_path.read_text() == "stale"
    flagged = replace(result, flags=("late",))
    outputs.write_result(tmp_path, "ann", flagged, "k", written=seen)
    assert '"late"' in json_path.read_text() and page_path.read_text() != "stale"
    outputs.write_result(tmp_path, "ann", flagged, "another key", page=False, written=seen)
    assert '"another key"' in json_path.read_text()


def test_reading_the_course_late_policy_imports_no_nbgrader():
    """A batch reads the course config's late policy before grading; that must not wait for nbgrader (whose
    import a batch starts in the background and which costs seconds)."""
    import subprocess
    import sys

    code = (
        "import sys; from grader.batch.late import course_policy; course_policy('sequence_models'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'nbgrader'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "[]"
