"""The feedback page and the failure text a student reads: property sentences, staff marks, pending
points, named arguments and a snippet that rebuilds the exact arguments of the failing call."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import torch

from grader.assignments.registry import get_assignment
from grader.checking.base import format_call, run_check
from grader.checking.reproduce import SNIPPET_HEADING, naming, snippet
from grader.report.html import render, total_line
from grader.results import CheckResult, ExerciseResult, NotebookResult, StaffMark


def _result() -> NotebookResult:
    seq2col = get_assignment("sequence_models").exercise("seq2col")
    windows, shapes = seq2col.checks[1], seq2col.checks[0]
    checks = (
        CheckResult(shapes.name, "passed", 0.5, 0.5),
        CheckResult(
            windows.name,
            "failed",
            0.0,
            1.5,
            message=f"for seq2col(seq, filter_size): wrong <b>\n"
            f"{SNIPPET_HEADING}\nseq = [1, 2]\nseq2col(seq, filter_size)",
            kind="values",
            staff=StaffMark("override", 1.0, reason="the windows are right, y is off by one", by="TA Kim"),
        ),
    )
    return NotebookResult(
        "sequence_models",
        "nb.ipynb",
        "graded",
        max_score=7.0,
        exercises=get_assignment("sequence_models").described(
            (
                ExerciseResult("seq2col", checks, 2.0),
                ExerciseResult(
                    "ar_fit_interpretation", (CheckResult("manual_review", "manual", 0, 2.0),), 2.0, manual=True
                ),
                ExerciseResult(
                    "other",
                    (CheckResult("manual_review", "manual", 0, 3.0, staff=StaffMark("manual", 2.5, reason="clear")),),
                    3.0,
                    manual=True,
                ),
            )
        ),
    )


def test_page_shows_properties_staff_marks_and_pending_points():
    result = _result()
    page = render(result)
    spec = get_assignment("sequence_models").exercise("seq2col")
    assert spec.checks[1].property in page and f'<code class="fn">{spec.checks[1].name}</code>' in page
    assert "graded: 4 of 5 points (0.5 automatic, 3.5 by staff); 2 points pending manual grading" == total_line(result)
    assert total_line(result) in page
    # the override: staff points, reason and what the grader gave; the manual mark: its points
    assert "Course staff set 1 point (TA Kim); the grader had given 0." in page
    assert "Reason: the windows are right, y is off by one" in page and "2.5 of 3 points" in page
    assert 'class="pending badge">pending<' in page and "(2 points)" in page
    # student text is escaped; the snippet gets a block of its own
    assert "wrong <b>" not in page and "wrong &lt;b&gt;" in page
    assert '<pre class="snippet">seq = [1, 2]\nseq2col(seq, filter_size)</pre>' in page
    assert "<script" not in page


def test_a_page_is_rendered_from_the_result_alone_without_torch_or_the_checks(tmp_path):
    """A result carries each check's property sentence, so rendering a stored result imports neither torch nor
    the checks, and the page still says what each check checks."""
    stored = tmp_path / "result.json"
    stored.write_text(json.dumps(_result().to_dict()))
    code = (
        "import json, sys; from grader.results import NotebookResult; from grader.report.html import render; "
        f"page = render(NotebookResult.from_dict(json.loads(open({str(stored)!r}).read()))); "
        "print(json.dumps([page, sorted(m for m in sys.modules if m == 'torch' or m.startswith("
        "('grader.checking', 'grader.assignments')))]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    page, imported = json.loads(out)
    assert imported == []
    assert get_assignment("sequence_models").exercise("seq2col").checks[1].property in page


def _rebuilt(code: str) -> dict:
    """Run a snippet (text the grader made, with values it chose) in a fresh namespace, call stubbed."""
    ns: dict = {}
    body, call = code.rsplit("\n", 1)
    exec(body, ns)
    return ns


def test_snippet_rebuilds_the_exact_arguments():
    rng = np.random.default_rng(3)
    small32 = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
    large = torch.from_numpy(rng.standard_normal((40, 30)))  # above the literal limit: base64 bytes
    mask = torch.tensor([[True, False], [True, True]])
    odd = np.array([1.5, np.nan, -np.inf])
    with naming(get_assignment("attention").argument_names):  # as the judge names the calls it makes
        code = snippet("scaled_dot_product_attention", (small32, large, mask, odd))
    assert code.splitlines()[-1] == "scaled_dot_product_attention(Q, K, V, mask)"
    ns = _rebuilt(code)
    assert ns["Q"].dtype == torch.float32 and torch.equal(ns["Q"], small32)
    assert ns["K"].dtype == torch.float64 and torch.equal(ns["K"], large) and "base64" in code
    assert torch.equal(ns["V"], mask)
    assert ns["mask"].dtype == np.float64 and np.array_equal(ns["mask"], odd, equal_nan=True)
    assert snippet("merge", ((torch.tensor(0.5), torch.zeros(2)), [1, (2, 3)])) is not None
    assert snippet("seq2col", (object(), 2)) is None  # nothing it could write down exactly


def test_failure_names_each_argument_and_a_passing_check_builds_no_text():
    built = []

    class Student:
        def call(self, name, args, **options):
            raise AssertionError("unused")

    def check_fails(student):
        x = torch.arange(6.0).reshape(2, 3)
        from grader.checking.base import CheckFailed

        raise CheckFailed(f"for {format_call('recurrent_unit', (x, x[:, :1], 2, 'a'))}: wrong")

    def check_passes(student):
        from grader.checking.base import Lazy

        Lazy(lambda: built.append(format_call("recurrent_unit", ())))

    with naming(get_assignment("sequence_models").argument_names):  # as the judge names the calls it makes
        failed = run_check("check_fails", check_fails, 1.0, Student())
    assert failed.message.startswith("for recurrent_unit(x, h_prev, Wrec, Win): wrong")
    assert "  x = tensor of shape (2, 3), float32:" in failed.message and "  Win = 'a'" in failed.message
    assert failed.message.endswith("recurrent_unit(x, h_prev, Wrec, Win)")
    passed = run_check("check_passes", check_passes, 1.0, Student())
    assert passed.status == "passed" and built == []


def test_terminal_summary_gives_the_same_total_in_one_line():
    from rich.console import Console

    from grader.report.terminal import print_summary

    console = Console(record=True, width=200)
    print_summary(_result(), console)
    text = console.export_text()
    assert "nb.ipynb: graded: 4 of 5 points (0.5 automatic, 3.5 by staff); 2 points pending manual grading" in text
    assert "pending" in text.split("ar_fit_interpretation", 1)[1].splitlines()[0]


def test_page_names_the_notebook_flags():
    from dataclasses import replace

    plain = render(_result())
    flagged = render(replace(_result(), flags=("release_identical", "late")))
    assert "unmodified release detected" not in plain and "late (the LMS" not in plain
    assert (
        "Note: unmodified release detected" in flagged and "Note: late (the LMS marked the submission late)." in flagged
    )
