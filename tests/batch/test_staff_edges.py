"""Staff commands and written answers at their edges: what a TA does that the main round trip of
tests/batch/test_manual.py does not (emptied answers, a typo in --out, several LMS files, a closed pipe, a
spreadsheet's own CSV dialect, scoring an unanswered question)."""

import csv
import subprocess
import sys

import nbformat

from grader.assignments.registry import SEQUENCE_MODELS
from grader.batch.facts import read_facts
from grader.cli import main
from grader.notebook import grade_id
from tests.batch.manual_course import QUESTION, _batch, _fill, _rows, _with_cell, course, graded, out, threads  # noqa: F401 (fixtures)


def test_an_emptied_answer_cell_is_unanswered_and_a_deleted_one_waits_for_staff(released, tmp_path):
    """Unanswered (0 points, nothing pending): the answer cell as released, or emptied (white space only). A
    deleted answer cell is not: the answer may be in a cell of its own, so staff look."""
    student, solution = released
    assert QUESTION in read_facts(str(student), SEQUENCE_MODELS).unanswered
    for text in ("", "  \n\n\t"):
        emptied = _with_cell(solution, QUESTION, text, tmp_path / "emptied.ipynb")
        assert QUESTION in read_facts(str(emptied), SEQUENCE_MODELS).unanswered
    answered = _with_cell(solution, QUESTION, "the weights follow the last two values", tmp_path / "answered.ipynb")
    assert QUESTION not in read_facts(str(answered), SEQUENCE_MODELS).unanswered
    nb = nbformat.read(solution, as_version=4)
    nb.cells = [c for c in nb.cells if grade_id(c) != QUESTION]
    nbformat.write(nb, tmp_path / "deleted.ipynb")
    facts = read_facts(str(tmp_path / "deleted.ipynb"), SEQUENCE_MODELS)
    assert facts.answers[QUESTION] == "" and QUESTION not in facts.unanswered


def test_a_batch_of_another_assignment_into_a_graded_folder_is_refused(out, course, capsys):
    """A folder holds one assignment's batch: grading another into it (a typo in --out) is refused before
    anything is read or written, so the first batch's grades, pages and staff marks stay as they were."""
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert main(["batch", str(course), "--assignment", "attention", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "holds the graded batch of sequence_models" in err and "Traceback" not in err
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before


def test_every_lms_file_in_the_folder_follows_the_totals(out, course, threads, tmp_path):
    """An LMS file the folder holds is rewritten with every output, whichever LMS the last command named: after
    a Canvas then a Gradescope export, a manual score reaches both files; a batch run again without --lms
    rewrites them too, so no file keeps earlier totals to be uploaded by mistake."""

    def lms_totals(lms):
        with open(out / f"{lms}-grades.csv", newline="") as f:
            return {r["ID" if lms == "canvas" else "SID"]: float(r["sequence_models"]) for r in csv.DictReader(f)}

    assert main(["export-grades", str(out), "--lms", "canvas"]) == 0
    assert main(["export-grades", str(out), "--lms", "gradescope"]) == 0
    scores = tmp_path / "scores.csv"
    scores.write_text(f"student,question,points\nada,{QUESTION},2\n")
    assert main(["manual", "import", str(out), str(scores)]) == 0
    totals = {s: float(r["total"]) for s, r in _rows(out).items()}
    assert totals["ada"] == 27 and lms_totals("canvas") == lms_totals("gradescope") == totals
    (out / "staff.json").unlink()  # the score gone, then a batch without --lms: the files follow again
    _batch(course, out, threads)
    totals = {s: float(r["total"]) for s, r in _rows(out).items()}
    assert totals["ada"] == 25 and lms_totals("canvas") == lms_totals("gradescope") == totals


def test_a_staff_command_whose_reader_has_gone_still_rewrites_every_output(out, tmp_path):
    """`seqgrade manual import ... | head -1`, or a closed terminal: the score is stored and every output
    rewritten (before, the command stopped at its second line of output, between the two, with exit 1)."""
    scores = tmp_path / "scores.csv"
    scores.write_text(f"student,question,points\nada,{QUESTION},2\n")
    command = subprocess.Popen(
        [sys.executable, "-m", "grader.cli", "manual", "import", str(out), str(scores)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    command.stdout.close()  # the reader goes before the command writes its first line
    assert command.wait(timeout=300) == 0, command.stderr.read().decode()
    assert (
        float(_rows(out)["ada"]["total"]) == 27
        and "Graded by course staff" in (out / "feedback" / "ada.html").read_text()
    )


def test_an_unanswered_question_scored_by_staff_reads_as_scored(out, tmp_path):
    """A score imported for an unanswered question counts, and nothing says "unanswered" any more: not the
    row's reason, not the feedback page (the stored result had the question as unanswered)."""
    from grader.batch.totals import UNANSWERED

    assert "unanswered" in _rows(out)["bob"]["reason"]
    path = tmp_path / "scores.csv"
    path.write_text(f"student,question,points,comment\nbob,{QUESTION},2,answered on paper\n")
    assert main(["manual", "import", str(out), str(path)]) == 0
    row, page = _rows(out)["bob"], (out / "feedback" / "bob.html").read_text()
    assert row[QUESTION] == "2" and "unanswered" not in row["reason"]
    assert "answered on paper" in page and UNANSWERED not in page and "Unanswered:" not in page


def test_a_row_whose_answer_cell_was_cleared_scores_the_answer_the_batch_holds(out, tmp_path):
    """A TA who empties the export's answer cells (to keep the file small) has scored the answers the batch
    holds: the score counts at once, not "manual stale"; an answer cell that differs still sets it aside."""
    assert main(["manual", "export", str(out)]) == 0
    cleared = _fill(out / "manual" / f"{QUESTION}.csv", {"ada": ("2", "clear")}, tmp_path / "cleared.csv")
    rows = list(csv.DictReader(open(cleared, newline="")))
    for row in rows:
        row["answer"] = ""
    with open(cleared, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert main(["manual", "import", str(out), str(cleared)]) == 0
    assert _rows(out)["ada"][QUESTION] == "2" and "manual stale" not in _rows(out)["ada"]["reason"]
    other = tmp_path / "other.csv"
    other.write_text(f"student,question,answer,points\nada,{QUESTION},another answer,1\n")
    assert main(["manual", "import", str(out), str(other)]) == 0
    assert "manual stale" in _rows(out)["ada"]["reason"]


def test_a_score_file_from_a_semicolon_locale_spreadsheet_is_read(out, tmp_path):
    """A spreadsheet in a locale with the decimal comma saves CSV with ";" between cells, a byte-order mark,
    CRLF and perhaps capitalised headers: its scores are read (1,5 is 1.5), not refused as a missing column."""
    path = tmp_path / "scores.csv"
    path.write_bytes(f"\ufeffStudent;Question;Points;Comment\r\nada;{QUESTION};1,5;clear\r\n".encode())
    assert main(["manual", "import", str(out), str(path)]) == 0
    assert _rows(out)["ada"][QUESTION] == "1.5"
