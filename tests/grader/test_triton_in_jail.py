"""Student Triton kernels run in the jail: a kernel a cell defines can be read by ``triton.jit`` (the cell's
text is where ``inspect`` finds it, as in IPython) and runs in Triton's interpreter on the CPU tensors the
grader sends, the jail's environment asking for the interpreter before the student's ``import triton``."""

import importlib.util
import inspect

import pytest
import torch

from grader.jail import execute

from .jail_session import run, zygote  # noqa: F401  (the fixture)

KERNEL = """
import triton
import triton.language as tl


@triton.jit
def scale_kernel(X, Y, N, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offsets, mask=offsets < N, other=0.0)
    tl.store(Y + offsets, x * factor, mask=offsets < N)


def scaled(x, factor):
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 16),)](x, y, x.numel(), factor, BLOCK=16)
    return y
"""


def test_a_function_defined_in_a_cell_has_readable_source():
    ns = execute.fresh_namespace()
    report = execute.run_cell(3, "def twice(x):\n    return 2 * x\n", ns)
    assert report["status"] == "ok"
    assert inspect.getsource(ns["twice"]) == "def twice(x):\n    return 2 * x\n"


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton is not installed")
def test_a_triton_kernel_defined_in_a_cell_runs_in_the_jail_interpreted(zygote):  # noqa: F811
    session = run(zygote, "import math\nimport torch\n", KERNEL)
    try:
        assert [r["status"] for r in session.reports()] == ["ok", "ok"], session.reports()
        x = torch.arange(40, dtype=torch.float32)  # three blocks, the last one partial
        got = session.call("scaled", [x, 0.5]).value
        assert torch.equal(got, x * 0.5)
    finally:
        session.close()
