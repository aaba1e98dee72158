"""Half the work keeps the points of the half that is right (issue 50): where one output of a function is a
placeholder or ignores an input, the probe judges each output on its own (Probe.per_output), and the checks
that judge only the outputs that do real work (Check.outputs) keep their points. The checks of the placeholder
pay nothing, and the feedback names it; a function none of whose outputs does real work still earns nothing."""

import pytest

from grader.checking.gate import Observation

from .fair_grading import earned, judged, solution_notebook


def _solution(assignment: str, exercise: str) -> str:
    cells = solution_notebook(assignment)["cells"]
    return next("".join(c["source"]) for c in cells if c["metadata"].get("nbgrader", {}).get("grade_id") == exercise)


def _edited(assignment: str, exercise: str, old: str, new: str) -> str:
    source = _solution(assignment, exercise)
    assert source.count(old) == 1, old
    return source.replace(old, new)


CASES = {
    "tiled_attention, lse left as zeros": (
        "tiled_attention",
        ("    return O, lse\n", "    return O, torch.zeros_like(lse)\n"),
        {"check_tiled_attention_causality": 1.0, "check_tiled_attention_memory": 1.5},
        "does no real work: its output 1 is only zeros",
    ),
    "tiled_attention, lse that ignores K": (
        "tiled_attention",
        ("    return O, lse\n", "    return O, (Q * Q).sum(dim=-1)\n"),
        {"check_tiled_attention_causality": 1.0, "check_tiled_attention_memory": 1.5},
        "does no real work: its output 1 does not change when K changes, so it ignores K",
    ),
    "flash_forward, lse left as zeros": (
        "flash_forward",
        ("tl.store(LSE + rows, m + tl.log(l), mask=rows < N_Q)", "tl.store(LSE + rows, m * 0.0, mask=rows < N_Q)"),
        {
            "check_flash_forward_values": 1.5,
            "check_flash_forward_causal_values": 1.0,
            "check_flash_forward_causality": 0.5,
        },
        "does no real work: its output 1 is only zeros",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_output_left_as_a_placeholder_costs_only_the_checks_that_judge_it(case):
    exercise, (old, new), kept, cause = CASES[case]
    result = judged("recursive_attention", exercise, _edited("recursive_attention", exercise, old, new))
    assert earned(result) == kept, [(c.name, c.points, c.message[:200]) for c in result.checks]
    assert cause in result.root_cause, result.root_cause
    unpaid = [c for c in result.checks if c.kind == "degenerate"]
    assert unpaid and all("does no real work: its output 1" in c.message for c in unpaid)


def test_when_every_output_is_a_placeholder_the_function_earns_nothing():
    source = _edited(
        "recursive_attention",
        "tiled_attention",
        "    return O, lse\n",
        "    return torch.zeros_like(O), torch.zeros_like(lse)\n",
    )
    result = judged("recursive_attention", "tiled_attention", source)
    assert earned(result) == {}
    assert result.root_cause.startswith("does no real work: its output 0 is only zeros"), result.root_cause


def test_a_check_of_every_output_pays_nothing_when_one_does_no_real_work():
    seen = Observation([], [], [], outputs={1: "its output 1 is only zeros"})
    assert not seen and seen.against(None) == (1, "its output 1 is only zeros")
    assert seen.against((0,)) is None and seen.against((1,)) == (1, "its output 1 is only zeros")
