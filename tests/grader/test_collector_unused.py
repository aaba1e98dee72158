"""Modules nothing in seqgrade needs are not imported by its processes (grader.collector.UNUSED_MODULES)."""

import subprocess
import sys


def _imported_after(code: str) -> list[str]:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            code + "\nimport sys\nprint(sorted(m for m in sys.modules "
            "if m.startswith('rfc3987') and sys.modules[m] is not None))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return eval(out.strip().splitlines()[-1])


def test_nbformat_imports_rfc3987_syntax_unless_skipped():
    """The cost is real where the package is installed (it is, through jupyter-events), and skipping it
    leaves nbformat's validation and nbgrader's gradebook API working."""
    assert "rfc3987_syntax" in _imported_after("import nbformat")
    code = (
        "from grader.collector import skip_unused_imports; skip_unused_imports(); import nbformat, nbgrader.api; "
        "nb = nbformat.v4.new_notebook(); nb.cells.append(nbformat.v4.new_code_cell('x = 1')); "
        "nbformat.validate(nb)"
    )
    assert _imported_after(code) == []


def test_the_command_line_skips_them():
    code = "import sys; sys.argv = ['seqgrade', 'list']; from grader.cli import main; main(); import nbformat"
    assert _imported_after(code) == []
