"""Work a batch does once per notebook is done once: an LMS archive is unpacked once, and each new notebook's
result and feedback page are written once."""
from __future__ import annotations

import zipfile
from collections import Counter
from pathlib import Path

from grader.batch import inputs, outputs, run
from grader.cli import main


def _canvas_export(solution: Path, dest: Path) -> Path:
    """A Canvas export of two students: the solution twice under Canvas's file names."""
    with zipfile.ZipFile(dest, "w") as zf:
        for i in range(2):
            zf.writestr(f"student{i}_{1000 + i}_{5000 + i}_sequence_models.ipynb", solution.read_bytes())
    return dest


def test_an_export_is_unpacked_once_and_each_result_and_page_written_once(released, tmp_path, monkeypatch):
    discovered, written = [], Counter()
    real_discover, real_write = inputs.discover, outputs.write_atomic

    def discover(*args, **kw):
        discovered.append(args)
        return real_discover(*args, **kw)

    def write_atomic(path, data):
        written[Path(path).relative_to(tmp_path / "out").as_posix()] += 1
        return real_write(path, data)

    monkeypatch.setattr(inputs, "discover", discover)
    monkeypatch.setattr(run, "discover", discover)
    monkeypatch.setattr(outputs, "write_atomic", write_atomic)
    export = _canvas_export(released[1], tmp_path / "export.zip")
    assert main(["batch", str(export), "--assignment", "sequence_models", "--out", str(tmp_path / "out"),
                 "--workers", "1"]) == 0
    assert len(discovered) == 1
    per_student = {name: n for name, n in written.items() if name.startswith(("results/", "feedback/"))}
    assert len(per_student) == 4 and set(per_student.values()) == {1}, per_student


def test_reading_the_course_late_policy_imports_no_nbgrader():
    """A batch reads the course config's late policy before grading; that must not wait for nbgrader (whose
    import a batch starts in the background and which costs seconds)."""
    import subprocess
    import sys

    code = ("import sys; from grader.batch.late import course_policy; course_policy('sequence_models'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'nbgrader'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "[]"
