"""seqgrade on the same notebooks as nbgrader, for benchmarks/grading.py: ``seqgrade batch`` measured from process
start, its scores, where it and nbgrader disagree, and whether two of its runs wrote the same bytes."""

from __future__ import annotations

import csv
import filecmp
import sys
from pathlib import Path

from measure import Measured, measure
from submissions import ASSIGNMENT, folder_of

SEQGRADE = [sys.executable, "-m", "grader.cli"]


def run_seqgrade(paths: list[Path], work: Path, workers: int, *, sample_memory: bool = False) -> tuple[Measured, Path]:
    src = folder_of(paths, work / "in")
    out = work / "out"
    m = measure(
        [*SEQGRADE, "batch", str(src), "--assignment", ASSIGNMENT, "--out", str(out), "--workers", str(workers)],
        sample_memory=sample_memory,
    )
    if m.returncode != 0:
        raise SystemExit(f"seqgrade batch failed ({m.returncode}): {m.stderr[-3000:]}")
    return m, out


def seqgrade_scores(out: Path) -> dict[str, float]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {row["student_id"]: float(row["total"]) for row in csv.DictReader(f)}


def compare_points(theirs: dict[str, float], seq_outputs: list[Path], by_kind: dict[str, list[Path]]) -> list[str]:
    """Where seqgrade's first run and nbgrader disagree on a correct or partly wrong notebook's points
    (hostile notebooks fool or stop nbgrader, and it cannot read the invalid ones at all)."""
    if not seq_outputs:
        return []
    ours = seqgrade_scores(seq_outputs[0])
    found = []
    for kind in ("correct", "partly_wrong"):
        for path in by_kind.get(kind, []):
            s = path.stem
            if s not in theirs:
                found.append(f"{s} ({kind}): nbgrader recorded no score")
            elif abs(theirs[s] - ours.get(s, float("nan"))) > 1e-6 or s not in ours:
                found.append(f"{s} ({kind}): seqgrade {ours.get(s)}, nbgrader {theirs[s]:g}")
    return found


def same_outputs(a: Path, b: Path) -> list[str]:
    """Files that differ between two batch outputs (results, grades.csv, feedback pages)."""
    differ = []
    for name in ("grades.csv",):
        if not filecmp.cmp(a / name, b / name, shallow=False):
            differ.append(name)
    for sub in ("results", "feedback"):
        names = sorted(p.name for p in (a / sub).iterdir())
        if names != sorted(p.name for p in (b / sub).iterdir()):
            differ.append(f"{sub}/ (different files)")
            continue
        differ += [f"{sub}/{n}" for n in names if not filecmp.cmp(a / sub / n, b / sub / n, shallow=False)]
    return differ


def vars_of(m: Measured) -> dict:
    return {"wall_s": m.wall_s, "cpu_s": m.cpu_s, "cpu_source": m.cpu_source, "peak_mb": m.peak_mb}
