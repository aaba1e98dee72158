"""Import rules between layers: reference never imports grader; lower grader layers never import higher."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {
    0: ["version", "errors", "results", "codec", "allowance", "calls", "objects", "objectcalls", "compare", "execute", "invoke", "fsutil", "collector"],
    1: ["strategies", "standin_costs", "standins", "checks", "exercise", "assignments", "registry", "judge"],
    2: ["notebook", "backends", "sandbox"],
    3: ["grading"],
    4: ["batch", "release", "report", "nbgrader_hook", "samples", "demo", "gradescope", "server", "cli", "audit", "course"],
}
LAYER_OF = {name: layer for layer, names in LAYERS.items() for name in names}


def _imports(path: Path, package_parts: list[str]) -> set[str]:
    """Top-level grader submodules (or 'reference') imported by a file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "grader" and len(parts) > 1:
                    found.add(parts[1])
                elif parts[0] in ("grader", "reference"):
                    found.add(parts[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                parts = base + (node.module.split(".") if node.module else [])
            else:
                parts = (node.module or "").split(".")
            if parts[0] == "grader":
                if len(parts) > 1:
                    found.add(parts[1])
                else:
                    found.update(alias.name for alias in node.names)
            elif parts[0] == "reference":
                found.add("reference")
    return found


def test_reference_never_imports_grader():
    for path in (ROOT / "reference").rglob("*.py"):
        assert "grader" not in _imports(path, ["reference"]) and not any(
            m in LAYER_OF for m in _imports(path, ["reference"]) if m != "reference"), path


def test_every_grader_module_has_a_layer():
    names = {p.stem if p.is_file() else p.name for p in (ROOT / "grader").iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())}
    assert names == set(LAYER_OF)


def test_lower_layers_do_not_import_higher_layers():
    for path in (ROOT / "grader").rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("").parts  # ("grader", "checks", "base")
        if len(rel) < 2 or rel[1] == "__init__":
            continue
        own = LAYER_OF[rel[1]]
        package = list(rel[:-1]) if path.name != "__init__.py" else list(rel[:-1])
        for imported in _imports(path, list(rel[:-1])):
            if imported in LAYER_OF:
                assert LAYER_OF[imported] <= own, f"{path.relative_to(ROOT)} (layer {own}) imports {imported} (layer {LAYER_OF[imported]})"


def test_the_zygote_imports_nothing_that_holds_answers():
    path = ROOT / "grader" / "sandbox" / "zygote.py"
    imported = _imports(path, ["grader", "sandbox"])
    assert not imported & {"reference", "checks", "registry", "grading", "strategies", "standins", "judge"}, imported
