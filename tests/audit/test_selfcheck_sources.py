"""The audit runs a notebook's self-checks on the cells' own text: Triton's interpreter reads a kernel's source
when it runs it, by the cell's name, so text once given to that name (an earlier notebook in the same process:
a mutant, or another test's notebook) must never run in its place."""

import importlib.util
import linecache
import os

import nbformat
import pytest

from grader.audit.selfchecks import run_selfchecks

pytestmark = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton is not installed")

KERNEL = """import os
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch
import triton
import triton.language as tl


@triton.jit
def fill(X, N, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(X + i, tl.full([BLOCK], {value}, tl.float32), mask=i < N)


def filled(n):
    x = torch.zeros(n)
    fill[(1,)](x, n, BLOCK=16)
    return x
"""


def _notebook(path, value: float):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(KERNEL.format(value=value), metadata={"nbgrader": {"grade_id": "kernel"}}),
        nbformat.v4.new_code_cell(
            f"assert filled(3).tolist() == [{value}] * 3, filled(3).tolist()",
            metadata={"nbgrader": {"grade_id": "selfcheck_kernel"}},
        ),
    ]
    nbformat.write(nb, path)
    return path


def test_a_kernel_runs_its_own_text_though_another_text_had_its_cell_name(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", os.environ.get("TRITON_INTERPRET", "1"))
    stale = KERNEL.format(value=2.0)  # what an earlier notebook's cell of that name said
    monkeypatch.setitem(linecache.cache, "<kernel>", (len(stale), None, stale.splitlines(True), "<kernel>"))
    verdict = run_selfchecks(_notebook(tmp_path / "nb.ipynb", 1.0), module=None, budget_s=None)
    assert verdict.status == "ok", verdict
