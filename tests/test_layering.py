"""The grader's house: which package may import which, that the jail reaches nothing but itself, and that
no two modules import each other, however indirectly.

Every import counts, those inside functions too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# A module may import from its own layer's packages and from lower layers, never from higher ones.
LAYERS = {
    0: ["version", "errors", "fsutil", "collector", "results", "jail"],
    1: ["checking"],
    2: ["assignments"],
    3: ["notebook", "sandbox", "judge"],
    4: ["grading"],
    5: ["report"],
    6: ["batch", "course", "gradescope", "server", "audit", "nbgrader_hook", "cli"],
}
LAYER_OF = {name: layer for layer, names in LAYERS.items() for name in names}
JAIL = "grader.jail"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path = ROOT) -> set[str]:
    """The dotted names of the grader and reference modules a file imports (``from a import b`` gives
    ``a.b`` when that is a module, else ``a``)."""
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] in ("grader", "reference"))
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + (node.module.split(".") if node.module else []))
            if module.split(".")[0] not in ("grader", "reference"):
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.add(sub if _is_module(sub, root) else module)
    return found


def _is_module(dotted: str, root: Path) -> bool:
    path = root.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def graph(root: Path = ROOT, packages=("grader", "reference")) -> dict[str, set[str]]:
    return {module_name(p, root): imports_of(p, root) for pkg in packages for p in (root / pkg).rglob("*.py")}


def reached_from(start: str, edges: dict[str, set[str]]) -> dict[str, str]:
    """Every module reachable from the modules of package ``start``, each with the module that imports it."""
    todo = [m for m in edges if m == start or m.startswith(start + ".")]
    seen = {m: "" for m in todo}
    while todo:
        module = todo.pop()
        for target in edges.get(module, ()):
            for parent in _with_parents(target):
                if parent not in seen:
                    seen[parent] = module
                    todo.append(parent)
    return seen


def _with_parents(dotted: str) -> list[str]:
    """Importing ``a.b.c`` runs ``a/__init__``, ``a/b/__init__`` and ``a/b/c``."""
    parts = dotted.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def jail_escapes(root: Path = ROOT) -> list[str]:
    """What the jail's modules reach, transitively, outside the jail package (the grader package's own,
    empty-of-imports ``__init__`` aside): each as 'module (imported by ...)'."""
    reached = reached_from(JAIL, graph(root))
    return sorted(
        f"{m} (imported by {by})"
        for m, by in reached.items()
        if m != "grader" and not (m == JAIL or m.startswith(JAIL + "."))
    )


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_reference_never_imports_grader():
    for path in (ROOT / "reference").rglob("*.py"):
        assert not any(m.split(".")[0] == "grader" for m in imports_of(path)), path


def test_every_grader_module_has_a_layer():
    names = {
        p.stem if p.is_file() else p.name
        for p in (ROOT / "grader").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())
    }
    assert names == set(LAYER_OF)


def test_lower_layers_do_not_import_higher_layers():
    for module, targets in graph().items():
        parts = module.split(".")
        if parts[0] != "grader" or len(parts) < 2:
            continue
        own = LAYER_OF[parts[1]]
        for target in targets:
            t = target.split(".")
            if t[0] == "grader" and len(t) > 1:
                assert LAYER_OF[t[1]] <= own, f"{module} (layer {own}) imports {target} (layer {LAYER_OF[t[1]]})"


def test_the_jail_reaches_nothing_but_itself():
    """Everything that runs in the student's process lives in grader.jail, and nothing it imports, however
    indirectly, is outside it: not the reference, the checks, the registry or the assignments."""
    assert jail_escapes() == []


def test_the_grader_package_itself_imports_nothing():
    """``import grader.jail`` runs grader/__init__.py first: it must pull nothing else of the grader into the
    student's process."""
    assert imports_of(ROOT / "grader" / "__init__.py") == set()


@pytest.mark.parametrize(
    "victim, injected, found",
    [
        ("invoke.py", "import reference\n", "reference (imported by grader.jail.invoke)"),
        (
            "child.py",
            "from grader.checking import compare\n",
            "grader.checking.compare (imported by grader.jail.child)",
        ),
        (
            "codec.py",
            "def later():\n    from grader.assignments.registry import ASSIGNMENTS\n",
            "grader.assignments.registry (imported by grader.jail.codec)",
        ),
    ],
)
def test_an_import_smuggled_into_the_jail_is_found(tmp_path, victim, injected, found):
    """The jail test fails when a jail module imports the answers, directly, through another grader module,
    or inside a function."""
    for pkg in ("grader", "reference"):
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    assert jail_escapes(tmp_path) == []
    target = tmp_path / "grader" / "jail" / victim
    target.write_text(target.read_text() + "\n" + injected)
    escapes = jail_escapes(tmp_path)
    assert found in escapes


def test_no_import_cycle():
    assert cycles(graph()) == []


def test_a_cycle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_source_file_passes_400_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for folder in ("grader", "reference", "benchmarks", "tests")
        for p in (ROOT / folder).rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 400
    }
    assert long == {}
