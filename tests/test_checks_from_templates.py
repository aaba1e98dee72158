"""Every property the course grades is written once, as a template (grader.checking.templates and the position
templates), and an exercise's check is that template with the exercise's parameters. A check module that still
writes a property by hand says why, in a comment of one line starting with ``# by hand:`` right above it.

The census reads the check modules' syntax: a check is *from a template* when it is a module-level
``check_x = check(...)``, *delegated* when its body (past the docstring) is one call to a helper, and *by hand*
otherwise. Properties are told apart by the check's name, as the review of 2026-12-01 counted them."""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = ROOT / "grader" / "assignments"
PROPERTIES = {  # a check's property, from its name (first match wins)
    "gradients": re.compile(r"_gradients?$"),
    "causality": re.compile(r"_causality$|_is_causal$"),
    "equivariance": re.compile(r"equivarian|invarian|permutation|independen"),
    "single example": re.compile(r"_single_(example|sequence)$"),
    "format": re.compile(r"_shapes?$|_dtypes?$|_format$|_returns_|_shape_and_"),
    "values": re.compile(r"_values$|_matches_|_equals_|_counts?$|_windows$|_least_squares$|_reproduces_"),
}
MOST_BY_HAND = 9  # issue 49 aims at 8; 9 today, each with its reason (30 before it)


@dataclass(frozen=True)
class Found:
    module: str
    name: str
    how: str  # "template", "delegated" or "by hand"
    reason: str  # the "# by hand:" comment above a hand-written check ("" where none)

    @property
    def property(self) -> str | None:
        return next((p for p, pattern in PROPERTIES.items() if pattern.search(self.name)), None)


def _body(node: ast.FunctionDef) -> list[ast.stmt]:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body


def census(folder: Path = ASSIGNMENTS) -> list[Found]:
    found = []
    for path in sorted(folder.glob("*/*.py")):
        if path.name == "answers.py":  # answers to questions (a number, a yes or no), not a function's properties
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.parse("\n".join(lines)).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name) and target.id.startswith("check_") and isinstance(node.value, ast.Call):
                    found.append(Found(str(path.relative_to(folder.parent)), target.id, "template", ""))
            elif isinstance(node, ast.FunctionDef) and node.name.startswith("check_"):
                body = _body(node)
                one_call = (
                    len(body) == 1
                    and isinstance(body[0], (ast.Expr, ast.Return))
                    and isinstance(body[0].value, ast.Call)
                )
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                above = lines[first - 2].strip() if first >= 2 else ""
                reason = above[len("# by hand:") :].strip() if above.startswith("# by hand:") else ""
                found.append(
                    Found(
                        str(path.relative_to(folder.parent)), node.name, "delegated" if one_call else "by hand", reason
                    )
                )
    return found


def test_the_census_reads_templates_helpers_and_hand_written_checks(tmp_path):
    """The census itself: it tells a template, a delegation and a hand-written check apart, and reads the reason."""
    module = tmp_path / "demo" / "checks.py"
    module.parent.mkdir()
    module.write_text(
        'check_f_values = check(values, "check_f_values", "doc")\n\n'
        "def check_f_gradients(student):\n"
        '    """Doc."""\n'
        "    helper(student)\n\n"
        "# by hand: the property compares two calls of different functions\n"
        "def check_f_causality(student):\n"
        "    x = 1\n"
        "    return x\n\n"
        "def check_g_shape(student):\n"
        "    pass\n"
    )
    got = {(f.name, f.how, f.reason, f.property) for f in census(tmp_path)}
    assert got == {
        ("check_f_values", "template", "", "values"),
        ("check_f_gradients", "delegated", "", "gradients"),
        ("check_f_causality", "by hand", "the property compares two calls of different functions", "causality"),
        ("check_g_shape", "by hand", "", "format"),
    }


def test_at_most_a_few_property_checks_are_written_by_hand():
    by_hand = [f for f in census() if f.how == "by hand" and f.property]
    assert len(by_hand) <= MOST_BY_HAND, "\n".join(f"{f.module}: {f.name} ({f.property})" for f in by_hand)


@pytest.mark.parametrize("found", [f for f in census() if f.how == "by hand" and f.property], ids=lambda f: f.name)
def test_a_property_check_written_by_hand_says_why(found):
    assert found.reason, (
        f"{found.module}: {found.name} writes its {found.property} property by hand: build it from a template "
        f"(grader/checking/templates.py), or say why not in a '# by hand: ...' line right above it"
    )
