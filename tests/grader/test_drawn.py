"""The store of drawn examples: cases come back bit for bit, or are not stored; grades do not change."""

import json
import math

import numpy as np
import pytest
import torch

from grader.assignments.registry import SEQUENCE_MODELS
from grader.checking import base, drawn
from grader.checking.strategies import Dims
from grader.judge import judge_exercise
from grader.sandbox.inprocess import InProcess

from .solutions import SOLUTION

CASES = [
    None,
    True,
    0,
    -7,
    2**70,
    "text",
    0.1,
    -0.0,
    math.inf,
    math.nan,
    5e-324,
    (1, [2, (3,)]),
    [],
    (),
    {"a": 1, (1, 2): [True]},
    {2: "x"},
    np.arange(6, dtype=np.int64).reshape(2, 3),
    np.zeros((0, 4)),
    np.array(2.5),
    np.array([True, False]),
    np.float32(1.5),
    np.int16(-3),
    np.linspace(0, 1, 5, dtype=np.float16),
    torch.float64,
    torch.bfloat16,
    Dims(B=2, T=3, d_in=1, d_h=4, seed=9),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: type(c).__name__)
def test_every_kind_of_drawn_value_comes_back_identical(case):
    back = drawn.decode(json.loads(json.dumps(drawn.encode(case))))
    assert drawn.identical(case, back)


@pytest.mark.parametrize(
    "a, b",
    [
        (1, 1.0),
        (1, True),
        ((1,), [1]),
        (0.0, -0.0),
        (np.zeros(3), np.zeros(3, dtype=np.float32)),
        (np.zeros((2, 3)), np.zeros((3, 2))),
        (np.arange(6.0).reshape(2, 3).T, np.arange(6.0).reshape(2, 3).T.copy()),
        (np.float64(1), 1.0),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        (torch.float32, torch.float64),
        (Dims(1, 2, 3, 4, 5), Dims(1, 2, 3, 4, 6)),
    ],
)
def test_identical_tells_apart_what_a_student_function_could_tell_apart(a, b):
    assert not drawn.identical(a, b)


@pytest.mark.parametrize("value", [np.array(["x"]), np.array([object()]), object(), torch.zeros(2), {1, 2}])
def test_values_the_store_does_not_write_are_refused(value):
    with pytest.raises(drawn.Unstorable):
        drawn.encode(value)


@pytest.mark.parametrize(
    "data",
    [
        {"dc": "os:PathLike", "f": {}},
        {"dc": "grader.errors:UsageError", "f": {}},
        {"a": "|O", "s": [1], "b": ""},
        {"a": "<f8", "s": [3], "b": "AAAA"},
        {"dtype": "nn"},
        {"zz": 1},
        [1, 2],
        {},
    ],
)
def test_decoding_refuses_what_the_store_never_writes(data):
    with pytest.raises((ValueError, TypeError)):
        drawn.decode(data)


def test_a_case_that_would_not_come_back_identical_is_not_stored(tmp_path):
    store = drawn.Store(tmp_path / "examples.json")
    store.put("k:transposed", [np.arange(6.0).reshape(2, 3).T])  # its strides are lost in the stored form
    store.put("k:tensor", [torch.zeros(2)])
    store.put("k:ok", [(Dims(1, 1, 1, 1, 0), 3)])
    store.save()
    again = drawn.Store(tmp_path / "examples.json")
    assert again.get("k:transposed") is None and again.get("k:tensor") is None
    assert drawn.identical(again.get("k:ok"), [(Dims(1, 1, 1, 1, 0), 3)])


def test_two_processes_adding_cases_keep_both_and_a_damaged_file_is_ignored(tmp_path):
    path = tmp_path / "examples.json"
    first, second = drawn.Store(path), drawn.Store(path)
    first.get("nothing yet")
    second.get("nothing yet")
    first.put("k:a", [1])
    first.save()
    second.put("k:b", [2])
    second.save()
    assert drawn.Store(path).get("k:a") == [1] and drawn.Store(path).get("k:b") == [2]
    path.write_text("{not json", encoding="utf-8")
    assert drawn.Store(path).get("k:a") is None
    path.write_text(json.dumps({"format": drawn.FORMAT, "cases": {"k:a": [{"dc": "os:sep", "f": {}}]}}))
    assert drawn.Store(path).get("k:a") is None


def test_the_key_names_the_check_and_tests_own_properties_are_not_stored():
    def prop(case):
        pass

    assert drawn.key_of(prop.__code__, 12, 0) is None
    key = drawn.key_of(base.for_all.__code__, 12, 1)
    assert key.startswith("checking/base.py:for_all:") and key.endswith(":12:1")


def _grade_all(student):
    return {(e.id, r.name): r for e in SEQUENCE_MODELS.exercises for r in judge_exercise(e, student).checks}


WRONG = (
    SOLUTION
    + """
def seq2col(seq, filter_size):
    seq = np.asarray(seq)
    return np.stack([seq[i:i + filter_size] for i in range(len(seq) - filter_size)]), seq[1:len(seq) - filter_size + 1]
"""
)


def test_grades_from_stored_cases_equal_grades_from_drawn_ones_and_the_store_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(base, "_DRAWN", {})
    monkeypatch.setattr(drawn, "_STORE", drawn.Store(tmp_path / "examples.json"))
    students = [InProcess.from_cells([(0, source)], ("selfcheck",))[0] for source in (SOLUTION, WRONG)]
    drawn_once = [_grade_all(s) for s in students]
    drawn.save()
    assert drawn._STORE.added == {} and (tmp_path / "examples.json").exists()

    # A new process: nothing drawn in memory, the store read from disk; hypothesis must not draw again.
    monkeypatch.setattr(base, "_DRAWN", {})
    monkeypatch.setattr(drawn, "_STORE", drawn.Store(tmp_path / "examples.json"))
    recorded = []
    monkeypatch.setattr(drawn.Store, "put", lambda self, key, cases: recorded.append(key))
    assert [_grade_all(s) for s in students] == drawn_once
    assert recorded == []
    assert drawn_once[1][("seq2col", "check_seq2col_windows")].status == "failed"


LATER = """
import sys
from grader.grading import Grader
result = Grader(backend="inprocess").grade(sys.argv[1], "sequence_models")
print("hypothesis imported:", "hypothesis" in sys.modules)
print(result.to_json())
"""


def test_a_process_that_replays_stored_cases_on_a_passing_notebook_never_imports_hypothesis(released, tmp_path):
    import subprocess
    import sys

    _, solution = released
    env = {**__import__("os").environ, "SEQGRADE_CACHE_DIR": str(tmp_path / "store")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", LATER, str(solution)], env=env, capture_output=True, text=True, check=True
        ).stdout.split("\n", 1)
        for _ in range(2)
    ]
    assert runs[0][0] == "hypothesis imported: True"  # the first process drew the cases
    assert runs[1][0] == "hypothesis imported: False"
    assert runs[0][1] == runs[1][1]  # and the grades are the same, byte for byte
    assert '"score": 25.0' in runs[1][1]
