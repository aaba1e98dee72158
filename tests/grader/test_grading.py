"""Grading whole notebooks: full marks, zero marks, invalid files, odd structure, the CLI, determinism."""

import json
import os
import subprocess
import sys

import nbformat
import pytest

from grader.assignments.registry import SEQUENCE_MODELS
from grader.cli import main
from grader.notebook import grade_id

AUTO_MAX = sum(e.points for e in SEQUENCE_MODELS.exercises if e.kind != "manual")


def test_solution_gets_every_automatic_point(sandbox_grader, released):
    result = sandbox_grader.grade(released[1])
    assert result.status == "graded"
    assert result.score == AUTO_MAX and result.max_score == SEQUENCE_MODELS.max_score
    assert result.exercise("ar_fit_interpretation").status == "manual"


def test_unchanged_release_gets_zero_with_clear_statuses(sandbox_grader, released):
    result = sandbox_grader.grade(released[0])
    assert result.status == "graded" and result.score == 0
    statuses = {c.status for e in result.exercises for c in e.checks}
    assert statuses <= {"missing", "error", "manual"}
    seq2col = result.exercise("seq2col").checks[0]
    assert "NotImplementedError" in seq2col.message


@pytest.mark.parametrize(
    "content, words",
    [
        (b"", ["empty"]),
        (b"   \n", ["empty"]),
        (b'{"cells": [', ["not valid JSON", "line 1"]),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", ["binary"]),
        (b'{"a": 1}', ["not a Jupyter notebook"]),
        (b'{"cells": [], "metadata": {}, "nbformat": 5, "nbformat_minor": 0}', ["format version 5"]),
        (b'{"cells": [], "metadata": {}, "nbformat": 2, "nbformat_minor": 0}', ["format version 2"]),
        (b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', ["has no cells", "nothing to grade"]),
        (
            b'{"cells": [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": "def seq2col(seq, k): ..."}],'
            b' "metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
            ["has no code cells", "nothing to grade"],
        ),
    ],
)
def test_invalid_notebooks_get_a_result_with_a_reason(sandbox_grader, tmp_path, content, words):
    path = tmp_path / "sequence_models.ipynb"
    path.write_bytes(content)
    result = sandbox_grader.grade(path)
    assert result.status == "invalid" and result.score == 0
    for word in words:
        assert word in result.reason
    assert len(result.exercises) == len(SEQUENCE_MODELS.exercises)
    graded = [e for e in result.exercises if not e.manual]
    # The first thing a student reads names what happened, not a missing definition.
    assert all(e.root_cause.startswith("not graded: the notebook could not be read") for e in graded)
    assert {c.kind for e in graded for c in e.checks} == {"not_graded"}


def test_a_truncated_notebook_is_invalid(sandbox_grader, released, tmp_path):
    text = released[1].read_text()
    path = tmp_path / "sequence_models.ipynb"
    path.write_text(text[: len(text) // 3])
    result = sandbox_grader.grade(path)
    assert result.status == "invalid" and "truncated" in result.reason


def _variant(released, tmp_path, edit, name="sequence_models.ipynb"):
    nb = nbformat.read(released[1], as_version=4)
    edit(nb)
    path = tmp_path / name
    path.write_text(nbformat.writes(nb))
    return path


def _code(nb, gid):
    return next(c for c in nb.cells if grade_id(c) == gid)


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(
            lambda nb: (
                nb.cells.reverse()
                or nb.cells.sort(key=lambda c: c.cell_type != "code" or "import numpy" not in c.source)
            ),
            id="reordered",
        ),
        pytest.param(
            lambda nb: nb.cells.extend([nbformat.from_dict(c) for c in nb.cells if c.cell_type == "code"]),
            id="duplicated",
        ),
        pytest.param(
            lambda nb: nb.cells.insert(
                3, nbformat.v4.new_code_cell("x = 1\n%matplotlib inline\n!pip install nothing\nfiles = !ls")
            ),
            id="inserted-with-magics",
        ),
        pytest.param(lambda nb: [c.metadata.clear() for c in nb.cells], id="metadata-stripped"),
        pytest.param(
            lambda nb: nb.cells.insert(2, nbformat.v4.new_code_cell("raise RuntimeError('oops')")), id="failing-cell"
        ),
    ],
)
def test_structure_changes_still_grade_fully(sandbox_grader, released, tmp_path, edit):
    result = sandbox_grader.grade(_variant(released, tmp_path, edit))
    assert result.status == "graded"
    assert result.score == AUTO_MAX, [
        (c.name, c.message) for e in result.exercises for c in e.checks if c.status != "passed"
    ]


def test_code_in_a_markdown_cell_is_not_run(sandbox_grader, released, tmp_path):
    def edit(nb):
        cell = _code(nb, "causal_mask")
        cell.cell_type = "markdown"
        cell.pop("outputs", None)
        cell.pop("execution_count", None)

    result = sandbox_grader.grade(_variant(released, tmp_path, edit))
    assert {c.status for c in result.exercise("causal_mask").checks} == {"missing"}


def test_a_notebook_of_another_assignment_is_recognised(sandbox_grader, released, tmp_path):
    path = _variant(released, tmp_path, lambda nb: nb.metadata.update(seqgrade={"assignment": "transformers_2"}))
    result = sandbox_grader.grade(path, "sequence_models")
    assert result.status == "wrong_assignment" and "transformers_2" in result.reason and result.score == 0


def test_cli_json_output_has_the_documented_shape(released, capsys):
    assert main(["grade", str(released[1]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"version", "assignment", "notebook", "status", "score", "max_score", "exercises"} <= set(data)
    ex = data["exercises"][0]
    assert {"id", "score", "max_score", "checks"} <= set(ex)
    assert {"name", "status", "points", "max_points", "message"} <= set(ex["checks"][0])
    assert data["score"] == AUTO_MAX


def test_cli_writes_an_html_feedback_page(released, tmp_path, capsys):
    out = tmp_path / "fb" / "feedback.html"
    assert main(["grade", str(released[0]), "--feedback", str(out)]) == 0
    html = out.read_text()
    assert "NotImplementedError" in html and "<script" not in html
    assert "seq2col" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, words",
    [
        (["grade", "no/such/notebook.ipynb"], "no such file"),
        (["grade", "pyproject.toml", "--assignment", "nope"], "unknown assignment 'nope'"),
        (["release", "nope", "--out", "/tmp/x"], "unknown assignment 'nope'"),
        (["release", "sequence_models", "--out", "/proc/version/x"], "cannot write"),
        (["grade", "pyproject.toml", "--timeout", "-1"], "positive"),
    ],
)
def test_cli_usage_errors_exit_2_with_one_line(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1


def test_cli_list_shows_every_exercise(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for e in SEQUENCE_MODELS.exercises:
        assert e.id in out


def test_grading_is_byte_identical_across_runs(released, tmp_path):
    """Three separate processes grading a partly wrong notebook print the same JSON, byte for byte."""

    def edit(nb):
        _code(nb, "seq2col").source = (
            "def seq2col(seq, filter_size):\n    seq = np.asarray(seq)\n"
            "    return np.stack([seq[i:i+filter_size] for i in range(len(seq)-filter_size)]), seq[:-filter_size]"
        )
        _code(nb, "masked_self_attention").source = (
            "def masked_self_attention(X, Wq, Wk, Wv):\n"
            "    return torch.softmax((X @ Wq) @ (X @ Wk).transpose(-2, -1), dim=-1) @ (X @ Wv)"
        )

    path = _variant(released, tmp_path, edit)
    outputs = [
        subprocess.run(
            [sys.executable, "-m", "grader.cli", "grade", str(path), "--json"],
            capture_output=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in (1, 2, 3)
    ]
    assert outputs[0] == outputs[1] == outputs[2]
    assert 0 < json.loads(outputs[0])["score"] < AUTO_MAX


def test_missing_kernel_features_are_named_and_weaker_isolation_needs_asking(released, monkeypatch, capsys):
    """Without namespaces seqgrade refuses with the reason (exit 3) and names the explicit fallback."""
    from grader.sandbox import procfs

    monkeypatch.setattr(
        procfs,
        "probe",
        lambda: {"namespaces": False, "reason": "unshare: Operation not permitted", "root": False, "python": "3.11"},
    )
    assert main(["grade", str(released[1])]) == 3
    err = capsys.readouterr().err
    assert "Operation not permitted" in err and "--isolation rlimits" in err and len(err.strip().splitlines()) == 1
    # (the fallback itself: tests/grader/test_rlimits.py)


def test_grading_one_assignment_imports_no_other_assignments_checks():
    """The registry imports an assignment's module (its checks, its references) only when asked for it."""
    code = (
        "import sys; from grader.assignments.registry import ASSIGNMENTS, get_assignment; "
        "get_assignment('sequence_models'); "
        "print(sorted({m.split('.')[2] for m in sys.modules if m.startswith('grader.assignments.')}), "
        "list(ASSIGNMENTS), "
        "'rnn_lm' in ASSIGNMENTS, 'nope' in ASSIGNMENTS)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == (
        "['outline', 'registry', 'sequence_models'] "
        "['sequence_models', 'attention', 'recursive_attention', 'rnn_lm', 'lm_modules'] True False"
    )
