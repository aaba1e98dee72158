"""The benchmark's class: N byte-distinct ``sequence_models`` submissions, a quarter each correct, partly wrong,
hostile and invalid, and folders of them (for benchmarks/grading.py)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

ASSIGNMENT = "sequence_models"
KINDS = ("correct", "partly_wrong", "hostile", "invalid")


def make_submissions(n: int, seed: int, work: Path) -> dict[str, list[Path]]:
    """N byte-distinct notebooks, by kind (the kinds cycle as in grader.course.samples.make_samples)."""
    from grader.course.release import release
    from grader.course.samples import make_samples

    solution = release(ASSIGNMENT, work / "solution", solutions=True) / f"{ASSIGNMENT}.ipynb"
    made = make_samples(solution, work / "made", count=n, seed=seed)
    rng = random.Random(seed)
    out = work / "all"
    out.mkdir()
    by_kind: dict[str, list[Path]] = {k: [] for k in KINDS}
    for i, path in enumerate(made):
        kind = KINDS[i % 4]
        dest = out / path.name
        if kind == "invalid":  # the same truncated upload, cut at a length of its own
            text = solution.read_text(encoding="utf-8")
            dest.write_text(text[: rng.randrange(len(text) // 4, len(text) // 2)] + f"\n{i}", encoding="utf-8")
        else:  # a metadata field of its own: the notebook runs and grades exactly as before
            nb = json.loads(path.read_text(encoding="utf-8"))
            nb.setdefault("metadata", {})["benchmark_copy"] = i
            dest.write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")
        by_kind[kind].append(dest)
    files = [p for paths in by_kind.values() for p in paths]
    if len({p.read_bytes() for p in files}) != len(files):
        raise SystemExit("two submissions are byte-identical")
    return by_kind


def folder_of(paths: list[Path], dest: Path) -> Path:
    dest.mkdir(parents=True)
    for p in paths:
        shutil.copy(p, dest / p.name)
    return dest
