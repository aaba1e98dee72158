"""The lm_modules notebook's self-check cells, run as a student runs them (the released notebook's cells in
order, in one namespace): on the solution each prints exactly one line and returns nothing; on the released
stubs each fails its cell with NotImplementedError; each fails the realistic mistakes of the wrong corpus
listed in CAUGHT, and passes every alternative of the corpus. The notebook is released from its source
folder, so these tests do not depend on the assignment's registration."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys

import nbformat
import pytest
from hypothesis import Phase, settings

from grader.course.release import release
from grader.jail.execute import compile_cell
from grader.notebook import grade_id as _grade_id

from .corpus.courses import entries

ASSIGNMENT, NOTEBOOK = "lm_modules", "lm_modules.ipynb"
EXERCISES = ("RecurrentCell", "RNNLayer", "RNNLanguageModel", "sample_next", "generate")

# self-checked exercise -> the wrong corpus entries its self-check must fail
CAUGHT = {
    "RecurrentCell": [
        "cell_tanh",
        "cell_no_hidden_bias",
        "cell_one_linear_over_concat",
        "cell_detaches_previous_state",
        "cell_batch_loop_off_by_one",
        "cell_casts_to_float64",
        "cell_remembers_its_state",
    ],
    "RNNLayer": [
        "layer_returns_last_state",
        "layer_keeps_state_on_self",
        "layer_without_a_cell",
        "layer_truncates_backprop",
        "layer_runs_backwards",
        "layer_time_major",
    ],
    "RNNLanguageModel": [
        "lm_plain_list_of_layers",
        "lm_state_carried_between_layers",
        "lm_embeddings_to_every_layer",
        "lm_skips_the_last_layer",
        "lm_detaches_embeddings",
        "lm_zero_state_float64",
        "lm_zero_state_default_dtype",
        "lm_embeds_the_wrong_axis_order",
    ],
    "sample_next": [
        "sample_ignores_temperature",
        "sample_scales_probabilities_by_temperature",
        "sample_multiplies_logits_by_temperature",
        "sample_always_argmax",
        "sample_normalises_logits_linearly",
        "sample_global_rng",
        "sample_divides_by_zero_temperature",
        "sample_keeps_the_sample_axis",
        "sample_copies_the_generator",
        "sample_reseeds_from_the_initial_seed",
    ],
    "generate": [
        "generate_first_position",
        "generate_last_token_only",
        "generate_drops_the_prefix",
        "generate_global_rng",
        "generate_reseeds_every_step",
    ],
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("lm_modules")
    return release(ASSIGNMENT, root / "solution", solutions=True), release(ASSIGNMENT, root / "student")


def _run(folder, replace: dict | None = None, *, quick: bool = False) -> dict[str, object]:
    """Run the notebook's cells in order (hidden tests are gone from a release); return {self-check grade id:
    its printed line, or the exception it raised}. Other cells must run (a stub's class cell only defines)."""
    spec = importlib.util.spec_from_file_location(f"selfcheck_{ASSIGNMENT}", folder / "selfcheck.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(folder))  # selfcheck_base.py ships beside it
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    if quick:  # only the verdict matters: skip shrinking the counterexample
        module._SETTINGS = settings(module._SETTINGS, phases=(Phase.explicit, Phase.reuse, Phase.generate))
    ns: dict = {"__name__": "__main__"}
    results = {}
    saved = sys.modules.get("selfcheck")
    sys.modules["selfcheck"] = module
    try:
        for cell in nbformat.read(folder / NOTEBOOK, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            gid = _grade_id(cell)
            source = (replace or {}).get(gid, cell.source)
            if gid.startswith("selfcheck_"):
                out = io.StringIO()
                try:
                    with contextlib.redirect_stdout(out):
                        body, last = source.rstrip().rsplit("\n", 1)
                        exec(body, ns)
                        assert eval(last, ns) is None, "the self-check cell would echo a value"
                    results[gid] = out.getvalue()
                except Exception as exc:  # noqa: BLE001 - the verdict is the exception itself
                    results[gid] = exc
            else:
                with contextlib.suppress(NotImplementedError):  # answer stubs raise when run
                    exec(compile_cell(source, f"<{gid or 'cell'}>"), ns)
    finally:
        sys.modules.pop("selfcheck") if saved is None else sys.modules.__setitem__("selfcheck", saved)
    return results


def test_every_exercise_has_a_self_check_cell_after_it(folders):
    cells = [_grade_id(c) for c in nbformat.read(folders[0] / NOTEBOOK, as_version=4).cells]
    for name in EXERCISES:
        assert cells.index(f"selfcheck_{name}") == cells.index(name) + 1, name


def test_solution_passes_every_self_check_with_one_line(folders):
    results = _run(folders[0])
    assert set(results) == {f"selfcheck_{name}" for name in EXERCISES}
    for gid, printed in results.items():
        assert isinstance(printed, str) and printed.startswith("[ok] ") and printed.count("\n") == 1, (gid, printed)


def test_released_stubs_fail_every_self_check_as_not_implemented(folders):
    results = _run(folders[1])
    assert set(results) == {f"selfcheck_{name}" for name in EXERCISES}
    for gid, raised in results.items():
        assert isinstance(raised, NotImplementedError) and "not implemented yet" in str(raised), (gid, raised)


def _wrong() -> dict[str, dict]:
    return {e.name: e.data["REPLACE"] for e in entries(ASSIGNMENT, "wrong")}


def test_caught_lists_name_existing_entries_of_their_exercise():
    wrong = _wrong()
    for exercise, names in CAUGHT.items():
        for name in names:
            assert name in wrong and list(wrong[name]) == [exercise], name


@pytest.mark.parametrize("exercise,entry", [(x, e) for x, names in CAUGHT.items() for e in names])
def test_self_check_fails_a_common_mistake(exercise, entry, folders):
    got = _run(folders[0], _wrong()[entry], quick=True)[f"selfcheck_{exercise}"]
    assert type(got).__name__ == "SelfCheckFailed", f"{entry}: the self-check of {exercise} gave {got!r}"


@pytest.mark.parametrize("entry", [e.name for e in entries(ASSIGNMENT, "alternative")])
def test_self_checks_pass_every_alternative(entry, folders):
    replace = next(e.data["REPLACE"] for e in entries(ASSIGNMENT, "alternative") if e.name == entry)
    for gid, printed in _run(folders[0], replace, quick=True).items():
        assert isinstance(printed, str) and printed.startswith("[ok] "), (entry, gid, printed)
