"""Sample submissions made from an assignment's solution notebook: correct, partly wrong, hostile and invalid.

Used by ``seqgrade demo`` and the benchmarks. Each sample replaces the source of some solution cells
(found by grade_id) with other code, so they look like what students hand in. Each assignment keeps its
wrong and hostile cells beside its declaration, in ``grader/assignments/<id>/samples.py`` (``WRONG`` and
``HOSTILE``); :func:`sample_cells` finds them there.
"""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import nbformat

from grader.assignments.registry import get_assignment
from grader.errors import UsageError
from grader.fsutil import write_atomic
from grader.notebook import grade_id


@dataclass(frozen=True)
class SampleCells:
    """An assignment's sample cells by grade id: ``wrong`` ones (a partly wrong student gets three) and
    ``hostile`` ones (a hostile student gets them all)."""

    wrong: Mapping[str, str]
    hostile: Mapping[str, str]


def sample_cells(assignment: str) -> SampleCells:
    """The sample cells of ``assignment``, from ``grader/assignments/<id>/samples.py``."""
    get_assignment(assignment)  # an unknown id is a usage error, named as such
    try:
        module = importlib.import_module(f"grader.assignments.{assignment}.samples")
    except ModuleNotFoundError as exc:
        if exc.name != f"grader.assignments.{assignment}.samples":
            raise
        raise UsageError(
            f"{assignment} has no sample cells: add grader/assignments/{assignment}/samples.py "
            f"defining WRONG and HOSTILE"
        ) from None
    return SampleCells(dict(getattr(module, "WRONG", {})), dict(getattr(module, "HOSTILE", {})))


def _replace_cells(nb, replacements: dict[str, str]):
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        gid = grade_id(cell)
        if gid in replacements:
            cell.source = replacements[gid].strip("\n")
    return nb


def make_samples(solution_notebook: str | Path, out_dir: str | Path, *, count: int = 6, seed: int = 0) -> list[Path]:
    """Write ``count`` submissions (student ids ``student01``...) cycling through the four kinds, with the
    wrong and hostile cells of the notebook's assignment (named in its metadata)."""
    base = nbformat.read(solution_notebook, as_version=4)
    cells = sample_cells(base.metadata.get("seqgrade", {}).get("assignment", "sequence_models"))
    wrong, hostile = cells.wrong, cells.hostile
    rng = random.Random(seed)
    out_dir = Path(out_dir)
    paths = []
    for i in range(count):
        kind = ("correct", "partly_wrong", "hostile", "invalid")[i % 4]
        path = out_dir / f"student{i + 1:02d}.ipynb"
        if kind == "invalid":
            text = nbformat.writes(base)
            write_atomic(path, text[: rng.randrange(len(text) // 4, len(text) // 2)])  # truncated upload
        else:
            if kind == "partly_wrong":
                chosen = sorted(rng.sample(sorted(wrong), 3))
                nb = _replace_cells(base, {k: wrong[k] for k in chosen})
            elif kind == "hostile":
                nb = _replace_cells(base, hostile)
            else:
                nb = base
            write_atomic(path, nbformat.writes(nb) + "\n")
        paths.append(path)
    return paths
