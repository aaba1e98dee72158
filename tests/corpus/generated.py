"""Degenerate entries generated from the solution notebook: every function ignores one of its main inputs.

For each function exercise, each main input its probe declares (``Exercise.inputs``) is ignored in turn:
the solution's own cell gets a wrapper that replaces that input with a fixed value of the same kind
(a tensor of the same shape filled with one number, a fixed list, a fixed table...) before calling the
solution. Entry ``ignores_input_<k>`` does this to the k-th main input of every function that has one,
so an assignment needs as many notebooks as its function with the most main inputs. No such function may
earn a point from any check, except a check that judges only outputs the ignored input never changes
(``UNUSED``: attention's lse, and its weights, do not use the values V; Check.outputs); the other
exercises keep theirs.
"""

from __future__ import annotations

from grader.notebook import grade_id

from .build import Entry

# (exercise, main input's position) -> the outputs that do not depend on that input, as a fact of what the
# function computes: there the wrapped solution is still right, and a check of those outputs alone is paid.
UNUSED = {
    ("tiled_attention", 2): (1,),  # lse = log sum_j exp(q . k_j / sqrt(d)): no V
    ("flash_forward", 2): (1,),
    ("scaled_dot_product_attention", 2): (1,),  # the weights A: no V
}


def may_earn(exercise, position) -> set[str]:
    """The checks of ``exercise`` (a declaration) that may pay when it ignores its input at ``position``."""
    unused = set(UNUSED.get((exercise.id, position), ()))
    return {c.name for c in exercise.checks if c.outputs and set(c.outputs) <= unused}


FIXED = '''
def _seqgrade_fixed(x):
    """A value of the same kind as x that does not depend on it."""
    import numpy as _np
    import torch as _torch
    if isinstance(x, _torch.Tensor):
        if x.dtype == _torch.bool:
            return _torch.ones_like(x)
        return _torch.full_like(x, 0.3) if x.is_floating_point() else _torch.zeros_like(x)
    if isinstance(x, _np.ndarray):
        return _np.full_like(x, 2)
    if isinstance(x, bool):
        return x
    if isinstance(x, int):
        return 3
    if isinstance(x, float):
        return 0.3
    if isinstance(x, tuple):
        return tuple(_seqgrade_fixed(v) for v in x)
    if isinstance(x, list):
        return [3] * len(x) if all(isinstance(v, (int, float)) for v in x) else ["cows", "eat", "corn"]
    if isinstance(x, dict):
        return {("cows",): {"eat": 1.0}}
    if callable(x):  # a model: answers of the same form whose values do not depend on it
        return lambda *a, **k: _seqgrade_fixed(x(*a, **k))
    return x
'''

WRAPPER = '''
_seqgrade_solution_{name} = {name}


def {name}(*args, **kwargs):
    """The solution, with its main input {label} replaced by a fixed value: it ignores {label}."""
    args = list(args)
    if len(args) > {index}:
        {replace}
    return _seqgrade_solution_{name}(*args, **kwargs)
'''


def _wrapper(name: str, position, label: str) -> str:
    index, key = position if isinstance(position, tuple) else (position, None)
    replace = (
        f"args[{index}] = _seqgrade_fixed(args[{index}])"
        if key is None
        else f"args[{index}] = {{**args[{index}], {key!r}: _seqgrade_fixed(args[{index}][{key!r}])}}"
    )
    return FIXED + WRAPPER.format(name=name, index=index, replace=replace, label=label.replace('"', "'"))


def ignoring_entries(assignment: str) -> list[Entry]:
    """The generated entries of ``assignment``: ``REPLACE`` maps each wrapped exercise to None until
    :func:`fill` puts the solution's own source with the wrapper there."""
    from grader.assignments.registry import get_assignment

    spec = get_assignment(assignment)
    functions = [e for e in spec.exercises if e.kind == "function" and e.inputs]
    entries = []
    for k in range(max((len(e.inputs) for e in functions), default=0)):
        ignore = {e.id: list(e.inputs)[k] for e in functions if len(e.inputs) > k}
        doc = (
            "Each function ignores one main input: "
            + ", ".join(f"{ex} ignores {spec.exercise(ex).inputs[position]}" for ex, position in ignore.items())
            + "."
        )
        entries.append(
            Entry("degenerate", f"ignores_input_{k}", doc, {"IGNORE": ignore, "REPLACE": dict.fromkeys(ignore)})
        )
    return entries


def fill(entry: Entry, solution: dict) -> Entry:
    """``entry`` with its ``REPLACE`` sources made from the cells of the solution notebook ``solution``."""
    if "IGNORE" not in entry.data:
        return entry
    from grader.assignments.registry import get_assignment

    spec = get_assignment(solution["metadata"]["seqgrade"]["assignment"])
    cells = {grade_id(c): c["source"] for c in solution["cells"]}
    replace = {}
    for ex, position in entry.data["IGNORE"].items():
        source = cells[ex] if isinstance(cells[ex], str) else "".join(cells[ex])
        replace[ex] = source.rstrip() + "\n\n" + _wrapper(ex, position, spec.exercise(ex).inputs[position])
    return Entry(entry.kind, entry.name, entry.doc, {**entry.data, "REPLACE": replace})
