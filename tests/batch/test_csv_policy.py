"""One CSV policy (grader/batch/csvfile.py): no CSV seqgrade writes has a cell a spreadsheet runs as a
formula, and the numbers seqgrade computed stay numbers."""

import csv
import io
import re
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from grader.batch.csvfile import FORMULA_STARTS, cell, csv_text, neutralised, unquoted
from grader.batch.record import BatchRecord, StudentRecord
from grader.results import MANUAL_CHECK, CheckResult, ExerciseResult, NotebookResult, StaffMark

ROOT = Path(__file__).resolve().parents[2]
FORMULA = '=HYPERLINK("http://x","y")'
QUESTION = "ar_fit_interpretation"


def _people() -> dict:
    """Two students, every text a student or a TA controls starting like a formula."""
    return {
        FORMULA: StudentRecord("a.ipynb", name=FORMULA, email="@x", answers={QUESTION: "+1+cmd|' /C calc'!A0"}),
        "-2": StudentRecord("=b.ipynb", name="-2+3", email="\tx@y", answers={QUESTION: "- a list item"}),
    }


def _results() -> dict:
    def result(points):
        return NotebookResult(
            "sequence_models",
            "a.ipynb",
            "graded",
            max_score=3.5,
            exercises=(
                ExerciseResult("seq2col", (CheckResult("c", "passed", points, 1.5),), 1.5),
                ExerciseResult(
                    QUESTION,
                    (CheckResult(MANUAL_CHECK, "manual", 0, 2.0, staff=StaffMark("manual", 1.5, "=1+1")),),
                    2.0,
                    manual=True,
                ),
            ),
        )

    return {FORMULA: result(1.5), "-2": result(0.25)}


def _grades_csv(tmp_path) -> str:
    from grader.batch.outputs import write_grades_csv

    assignment = SimpleNamespace(
        exercises=[SimpleNamespace(id="seq2col", bonus=False), SimpleNamespace(id=QUESTION, bonus=False)]
    )
    write_grades_csv(tmp_path, assignment, _results(), _people(), {FORMULA: ("@note",)})
    return (tmp_path / "grades.csv").read_text()


def _lms_csv(lms):
    def text(tmp_path):
        from grader.batch.lms import lms_csv

        return lms_csv(lms, "sequence_models", _results(), _people())

    return text


def _manual_csv(tmp_path) -> str:
    from grader.batch.manual import answers_csv
    from grader.batch.staff import StoredMark, Target

    marks = {Target("-2", QUESTION, MANUAL_CHECK): StoredMark(StaffMark("manual", 1.5, "-1 for the bias"))}
    return answers_csv(QUESTION, 2.0, BatchRecord("sequence_models", "folder", "", students=_people()), marks)


# Every module that writes a CSV, and how to make it write one from the students above.
WRITERS = {
    "grader/batch/outputs.py": [_grades_csv],
    "grader/batch/lms.py": [_lms_csv("canvas"), _lms_csv("gradescope")],
    "grader/batch/manual.py": [_manual_csv],
}
NUMBER_COLUMNS = {"total", "max_score", "pending", "seq2col", QUESTION, "sequence_models", "max_points", "points"}


def _modules_writing_csv() -> tuple[set, set]:
    """(modules calling the shared writer, modules writing CSV some other way) in grader/."""
    shared, other = set(), set()
    for path in (ROOT / "grader").rglob("*.py"):
        rel, text = path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")
        if rel == "grader/batch/csvfile.py":
            continue
        if re.search(r"\bcsv_text\(", text):
            shared.add(rel)
        if re.search(
            r"csv\s*\.\s*(writer|DictWriter)\b|from\s+csv\s+import\s+.*\b(writer|DictWriter)\b|\.writerows?\(", text
        ):
            other.add(rel)
    return shared, other


def test_every_csv_writer_neutralises_formulas(tmp_path):
    shared, other = _modules_writing_csv()
    assert not other, f"these modules write CSV without grader.batch.csvfile.csv_text: {sorted(other)}"
    assert shared == set(WRITERS), (
        f"add each module that calls csv_text to WRITERS here: {sorted(shared ^ set(WRITERS))}"
    )
    for module, makers in WRITERS.items():
        for make in makers:
            text = make(tmp_path)
            rows = list(csv.DictReader(io.StringIO(text, newline="")))
            cells = [c for row in rows for c in row.values()] + list(rows[0])
            assert not [c for c in cells if c.startswith(FORMULA_STARTS)], (module, text)
            assert "'" + FORMULA in cells, (module, text)  # the name (or id) is there, as text
            numbers = [row[k] for row in rows for k in row if k in NUMBER_COLUMNS and row[k]]
            assert numbers and all(float(n) >= 0 for n in numbers), (module, numbers)


def test_the_policy_cell_by_cell():
    assert [neutralised(t) for t in ("=1", "+1", "-1.5", "@A1", "\t=1", "\r=1", "a=1", "", "'x")] == [
        "'=1",
        "'+1",
        "'-1.5",
        "'@A1",
        "'\t=1",
        "'\r=1",
        "a=1",
        "",
        "'x",
    ]
    assert cell(-1.5) == "-1.5" and cell(2) == "2" and cell(0.1 + 0.2) == "0.3"  # numbers seqgrade wrote stay numbers
    with pytest.raises(TypeError):
        cell(None)
    for text in ("=1", "-x", "'x", "plain", ""):
        assert unquoted(neutralised(text)) == text
    assert unquoted("'=1") == "=1"  # the one text that does not come back: its own quote reads as ours
    assert csv_text(["a", "b"], [["=x", 1.0], ['q"uote,', -0.5]]) == 'a,b\n\'=x,1\n"q""uote,",-0.5\n'


def test_a_gradescope_submitter_named_like_a_formula_is_text(released, tmp_path):
    """The reproduction: a Gradescope export whose submitter is named =HYPERLINK(...), graded with
    --lms gradescope, then its answers exported for manual grading."""
    import concurrent.futures as cf

    from grader.batch.run import BatchConfig, run_batch
    from grader.cli import main
    from tests.batch.manual_course import LIMITS

    archive = tmp_path / "gs.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(released[1], "export/submission_111/sequence_models.ipynb")
        zf.writestr(
            "export/submission_metadata.yml",
            f"submission_111:\n  :submitters:\n  - :name: '{FORMULA}'\n    :sid: '42'\n    :email: '@evil.example'\n",
        )
    with cf.ThreadPoolExecutor(1) as threads:
        run_batch(
            BatchConfig(
                str(archive),
                "sequence_models",
                str(tmp_path / "out"),
                limits=LIMITS,
                backend="inprocess",
                lms="gradescope",
            ),
            executor=threads,
        )
    assert main(["manual", "export", str(tmp_path / "out")]) == 0
    for name in ("grades.csv", "gradescope-grades.csv", f"manual/{QUESTION}.csv"):
        rows = list(csv.reader((tmp_path / "out" / name).open(newline="")))
        assert not [c for row in rows for c in row if c.startswith(FORMULA_STARTS)], (name, rows)
    grades = next(csv.DictReader((tmp_path / "out" / "grades.csv").open(newline="")))
    assert (grades["name"], grades["email"], grades["total"]) == ("'" + FORMULA, "'@evil.example", "25")
