"""The in-process backend (nbgrader's hidden test cells, the benchmark's floor) makes each stand-in's stub once
per process, as the sandbox does: not one autograd Function class per call, which grew without end."""

import pytest
import torch

from grader.assignments.registry import get_assignment
from grader.checking.calls import StudentRaised
from grader.jail import invoke
from grader.sandbox.inprocess import InProcess

CELLS = [
    (
        0,
        """
import torch
STASH = []
def two_steps(x, h, Wrec, Win):
    STASH.append(recurrent_unit)
    return recurrent_unit(x, recurrent_unit(x, h, Wrec, Win), Wrec, Win)
def later(x, h, Wrec, Win):
    return STASH[0](x, h, Wrec, Win)
""",
    )
]


def _args(seed: int):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randn(2, 3, generator=g, dtype=torch.float64),
        torch.randn(2, 4, generator=g, dtype=torch.float64),
        torch.randn(4, 4, generator=g, dtype=torch.float64),
        torch.randn(4, 3, generator=g, dtype=torch.float64),
    ]


def test_stubs_are_made_once_and_answer_every_call():
    unit = get_assignment("sequence_models").exercise("recurrent_unit").required_stand_in
    student, reports = InProcess.from_cells(CELLS)
    assert all(r["status"] == "ok" for r in reports), reports
    stand_ins = {"recurrent_unit": unit}
    student.call("two_steps", _args(0), stand_ins=stand_ins)
    made = len(invoke._STUBS)
    for seed in range(1, 6):
        args = _args(seed)
        reply = student.call("two_steps", args, stand_ins=stand_ins)
        x, h, Wrec, Win = args
        expected = unit([x, unit([x, h, Wrec, Win]), Wrec, Win])
        torch.testing.assert_close(reply.value, expected)
        assert [s.name for s in reply.served] == ["recurrent_unit", "recurrent_unit"]
    assert len(invoke._STUBS) == made


def test_a_stub_kept_past_its_call_is_refused():
    """It asks the call that is running now, which serves no stand-in (before, the old call's answered it)."""
    unit = get_assignment("sequence_models").exercise("recurrent_unit").required_stand_in
    student, _ = InProcess.from_cells(CELLS)
    student.call("two_steps", _args(0), stand_ins={"recurrent_unit": unit})
    with pytest.raises(StudentRaised, match="recurrent_unit is not available here"):
        student.call("later", _args(1))


def test_consecutive_calls_naming_other_stand_ins_get_their_own_stubs():
    def mine(x):
        return x

    def other(x):
        return -x

    def ask_a(name, kind, args, cotangent):
        return ("a", name)

    def ask_b(name, kind, args, cotangent):
        return ("b", name)

    ns = {"f": mine, "g": other, "alias": mine}
    for specs, ask, stubbed in [
        ({"f": ["x"]}, ask_a, {"f": ("a", "f")}),
        ({"f": ["x"]}, ask_a, {"f": ("a", "f")}),  # the stubs of the latest call, reused
        ({"f": ["x"], "g": ["x"]}, ask_a, {"f": ("a", "f"), "g": ("a", "g")}),
        ({"g": ["x"]}, ask_a, {"g": ("a", "g")}),
        ({"g": ["x"]}, ask_b, {"g": ("b", "g")}),
    ]:  # another asker: other stubs
        with invoke._stand_ins(ns, specs, ask):
            assert {name: ns[name](1) for name in stubbed} == stubbed
            assert ns["alias"](1) == stubbed.get("f", 1)  # an alias of the student's function is swapped with it
            assert ("f" in stubbed or ns["f"] is mine) and ("g" in stubbed or ns["g"] is other)
        assert ns == {"f": mine, "g": other, "alias": mine}
