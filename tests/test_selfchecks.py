"""The notebooks' self-check cells, run as a student runs them (the cells in order, in one namespace):
on the solution each prints exactly one line and returns nothing; on a released stub it fails its cell
with NotImplementedError; on the common mistakes the wrong corpora show, it fails its cell."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import sys

import nbformat
import pytest
from hypothesis import Phase, settings

from grader.assignments.registry import ASSIGNMENTS
from grader.course.release import release
from grader.jail.execute import compile_cell
from grader.notebook import grade_id as _grade_id
from grader.notebook import is_test_cell

from .corpus.build import load
from .corpus.courses import entries

# assignment -> the wrong corpus entries (file names) that its self-checks must catch
CAUGHT = {
    "sequence_models": [
        "seq2col_window_shifted",
        "seq2col_y_misaligned",
        "recurrent_unit_transposed_weights",
        "forward_loops_over_batch",
        "causal_mask_transposed",
        "attention_scale_one_over_d",
        "attention_without_mask",
    ],
    "attention": [
        "sdpa_no_scale",
        "sdpa_scale_one_over_dk",
        "sdpa_mask_inverted",
        "mha_mask_inverted",
        "self_attention_scaled_by_model_width",
    ],
    "recursive_attention": [
        "partial_scale_by_d",
        "merge_weights_swapped",
        "tiled_causal_one_ahead",
        "tiled_causal_diagonal_masked",
        "tiled_float32_state_float64_result",
        "kernel_running_sum_not_rescaled",
        "kernel_no_causal_mask",
        "kernel_lse_in_base_2",
    ],
    "rnn_lm": [
        "rnn_states_transposed_w_hh",
        "lstm_gate_order_swapped",
        "context_scaled_by_sqrt_d",
        "conv_padded_on_the_right",
    ],
}


def _wrong(assignment: str) -> dict[str, dict]:
    found = load("wrong") if assignment == "sequence_models" else entries(assignment, "wrong")
    return {e.name: e.data["REPLACE"] for e in found}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("selfchecks")
    return {a: (release(a, root / "solution", solutions=True), release(a, root / "student")) for a in ASSIGNMENTS}


class Notebook:
    """Runs a released notebook's code cells as the student's kernel would (hidden tests left out)."""

    def __init__(self, folder, assignment: str, replace: dict | None = None):
        self.nb = nbformat.read(folder / ASSIGNMENTS[assignment].notebook, as_version=4)
        spec = importlib.util.spec_from_file_location(f"selfcheck_{assignment}", folder / "selfcheck.py")
        self.selfcheck = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(folder))  # its shared helper, selfcheck_base.py, ships beside it
        try:
            spec.loader.exec_module(self.selfcheck)
        finally:
            sys.path.remove(str(folder))
        for cell in self.nb.cells:
            if _grade_id(cell) in (replace or {}):
                cell.source = replace[_grade_id(cell)]
        self.ns: dict = {"__name__": "__main__"}
        self.environ = dict(os.environ)

    def define(self) -> "Notebook":
        """Run every code cell except the self-checks and the hidden tests. As IPython does, each cell's text is
        where inspect finds it (triton.jit reads a kernel's source); what a cell sets in the environment (the
        bonus cell's TRITON_INTERPRET) stays in this notebook, for its self-checks."""
        saved, environ = sys.modules.get("selfcheck"), dict(os.environ)
        sys.modules["selfcheck"] = self.selfcheck
        try:
            for cell in self.nb.cells:
                if cell.cell_type == "code" and not is_test_cell(cell):
                    name = f"<{_grade_id(cell) or 'cell'}>"
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(compile_cell(cell.source, name), self.ns)
        finally:
            sys.modules.pop("selfcheck") if saved is None else sys.modules.__setitem__("selfcheck", saved)
            self.environ = dict(os.environ)
            os.environ.clear()
            os.environ.update(environ)
        return self

    def self_checks(self) -> dict[str, str]:
        return {_grade_id(c): c.source for c in self.nb.cells if _grade_id(c).startswith("selfcheck_")}

    def run(self, source: str) -> str:
        """Run one self-check cell and return what it printed; the value of its last line must be None."""
        out = io.StringIO()
        body, last = source.rstrip().rsplit("\n", 1)
        environ = dict(os.environ)
        os.environ.update(self.environ)
        try:
            with contextlib.redirect_stdout(out):
                exec(body, self.ns)
                value = eval(last, self.ns)
        finally:
            os.environ.clear()
            os.environ.update(environ)
        assert value is None, f"the cell would echo {value!r}"
        return out.getvalue()


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_solution_passes_every_self_check_with_one_line(assignment, folders):
    nb = Notebook(folders[assignment][0], assignment).define()
    assert nb.self_checks()
    for grade_id, source in nb.self_checks().items():
        printed = nb.run(source)
        assert printed.startswith("[ok] ") and printed.count("\n") == 1, (grade_id, printed)


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_released_stub_fails_its_self_check_as_not_implemented(assignment, folders):
    nb = Notebook(folders[assignment][1], assignment)
    with contextlib.redirect_stderr(io.StringIO()):
        for cell in nb.nb.cells:  # the stubs' cells define functions that raise NotImplementedError
            if cell.cell_type == "code" and not is_test_cell(cell):
                with contextlib.suppress(Exception):
                    sys.modules["selfcheck"] = nb.selfcheck
                    exec(cell.source, nb.ns)
    sys.modules.pop("selfcheck", None)
    grade_id, source = next(iter(nb.self_checks().items()))
    with pytest.raises(NotImplementedError, match="not implemented yet"):
        nb.run(source)


@pytest.mark.parametrize("assignment,entry", [(a, e) for a, names in CAUGHT.items() for e in names])
def test_self_check_fails_a_common_mistake(assignment, entry, folders):
    replace = _wrong(assignment)[entry]
    nb = Notebook(folders[assignment][0], assignment, replace).define()
    # Only the verdict matters here: skip shrinking the counterexample (what the student would read).
    nb.selfcheck._SETTINGS = settings(nb.selfcheck._SETTINGS, phases=(Phase.explicit, Phase.reuse, Phase.generate))
    checks = nb.self_checks()
    caught = []
    for exercise in replace:
        source = checks.get(f"selfcheck_{exercise}") or next(s for g, s in checks.items() if exercise in s)
        try:
            nb.run(source)
        except AssertionError as exc:
            caught.append(type(exc).__name__ == "SelfCheckFailed")
    assert caught and all(caught), f"{entry}: the self-check of {list(replace)} passed a wrong answer"


def test_grader_skips_self_check_cells(folders, tmp_path):
    """Grading runs no self-check: a stub notebook's self-check cells (which fail when run) leave no
    broken-cell note and cost nothing; the grader's own checks give the verdicts."""
    from grader.grading import Grader

    notebook = folders["sequence_models"][1] / ASSIGNMENTS["sequence_models"].notebook
    nb = nbformat.read(notebook, as_version=4)
    selfcheck_cells = {i for i, c in enumerate(nb.cells) if _grade_id(c).startswith("selfcheck_")}
    assert selfcheck_cells
    with Grader(backend="inprocess") as grader:
        result = grader.grade(notebook, "sequence_models")
    assert result.status == "graded" and result.score == 0
    noted = {c["index"] for c in result.cells if c.get("status") != "ok"}
    assert noted and not noted & selfcheck_cells, (noted, selfcheck_cells)


@pytest.mark.parametrize("version", ["solution", "student"])
def test_without_triton_the_bonus_says_so_and_the_rest_is_unchanged(version, folders, monkeypatch):
    """On a machine without Triton (macOS, Windows): the bonus cell runs and says Triton is missing, the bonus's
    self-check skips with one line, and every other cell and self-check does what it does with Triton."""
    monkeypatch.setitem(sys.modules, "triton", None)  # `import triton` fails, find_spec("triton") is None
    monkeypatch.setitem(sys.modules, "triton.language", None)
    folder = folders["recursive_attention"][0 if version == "solution" else 1]
    nb = Notebook(folder, "recursive_attention")
    printed = io.StringIO()
    sys.modules["selfcheck"] = nb.selfcheck
    try:
        for cell in nb.nb.cells:
            if cell.cell_type == "code" and not is_test_cell(cell):
                stub = version == "student" and _grade_id(cell) != "flash_forward"  # a stub may raise
                may_raise = (NotImplementedError,) if stub else ()
                with contextlib.redirect_stdout(printed), contextlib.suppress(*may_raise):
                    exec(compile_cell(cell.source, f"<{_grade_id(cell) or 'cell'}>"), nb.ns)
    finally:
        sys.modules.pop("selfcheck", None)
    assert printed.getvalue() == nb.selfcheck.NO_TRITON + "\n"
    with pytest.raises(nb.selfcheck.TritonMissing, match="Triton is not installed here"):
        nb.ns["flash_forward"](*(nb.selfcheck._randn(0, 3, 2).float() for _ in range(3)))
    bonus = nb.run(nb.self_checks()["selfcheck_flash_forward"])
    assert bonus.startswith("[skipped] ") and bonus.count("\n") == 1 and "Triton is not installed" in bonus, bonus
    if version == "solution":
        for grade_id, source in nb.self_checks().items():
            if grade_id != "selfcheck_flash_forward":
                printed = nb.run(source)
                assert printed.startswith("[ok] ") and printed.count("\n") == 1, (grade_id, printed)
