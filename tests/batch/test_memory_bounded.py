"""A batch in a memory-bounded place (the 2 GiB a Gradescope container or a small VM gives) survives a
notebook that asks the grader to compute far more than its inputs warrant: the honest rows are the same
bytes as in an unbounded run, and the hostile notebook is charged on the exercise that asked."""

import csv
import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.course.release import release
from grader.jail.isolation import current_cgroup_dir
from grader.notebook import grade_id

GiB = 2**30
ATTACK = """def online_softmax_attention(q, K, V, block_size):
    big = torch.ones(12000, q.shape[-1], dtype=q.dtype)  # 12000 x 12000 scores in the grader: 1.1 GB, twice
    s, v = attention_partial(big, big, torch.ones(12000, V.shape[-1], dtype=V.dtype))
    return torch.softmax(q @ K.T / math.sqrt(q.shape[-1]), dim=-1) @ V + 0 * v[:1].sum()
"""


def _with_cell(solution: Path, gid: str, source: str, dest: Path) -> None:
    nb = json.loads(solution.read_text())
    for cell in nb["cells"]:
        if grade_id(cell) == gid:
            cell["source"] = source
    dest.write_text(json.dumps(nb))


def _bounded(limit: int):
    """Put the batch (and all it starts) in a fresh memory cgroup of ``limit`` bytes, or, where there is
    none to make, under an address-space limit; returns (preexec function, cleanup)."""
    parent = current_cgroup_dir("memory") if os.geteuid() == 0 else None
    if parent:
        group = os.path.join(parent, f"seqgrade-test-bounded-{os.getpid()}")
        try:
            os.makedirs(group, exist_ok=True)
            Path(group, "memory.limit_in_bytes").write_text(str(limit))
            try:
                Path(group, "memory.memsw.limit_in_bytes").write_text(str(limit))
            except OSError:
                pass

            def join():
                Path(group, "cgroup.procs").write_text(str(os.getpid()))

            return join, lambda: _remove_cgroup(group)
        except OSError:
            pass

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit * 3, resource.RLIM_INFINITY))  # per process: each worker

    return cap, lambda: None


def _remove_cgroup(group: str) -> None:
    for child in sorted(Path(group).iterdir(), reverse=True):  # the jails' own cgroups, left empty
        if child.is_dir():
            try:
                os.rmdir(child)
            except OSError:
                pass
    try:
        os.rmdir(group)
    except OSError:
        pass


def _batch(folder: Path, out: Path, preexec=None) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "grader.cli",
        "batch",
        str(folder),
        "--assignment",
        "recursive_attention",
        "--workers",
        "1",
        "--out",
        str(out),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, preexec_fn=preexec, timeout=600)


@pytest.mark.slow
def test_a_notebook_that_asks_for_gigabytes_changes_no_other_row(tmp_path):
    solution = release("recursive_attention", tmp_path / "solution", solutions=True) / "recursive_attention.ipynb"
    folder = tmp_path / "submissions"
    folder.mkdir()
    shutil.copy(solution, folder / "honest1.ipynb")
    _with_cell(solution, "online_softmax_attention", ATTACK, folder / "greedy.ipynb")
    shutil.copy(solution, folder / "honest2.ipynb")
    free = _batch(folder, tmp_path / "free")
    assert free.returncode == 0, free.stderr[-2000:]
    preexec, cleanup = _bounded(2 * GiB)
    try:
        bounded = _batch(folder, tmp_path / "bounded", preexec)
    finally:
        cleanup()
    assert bounded.returncode == 0, bounded.stderr[-2000:]
    for student in ("honest1", "honest2"):
        rel = Path("results") / f"{student}.json"
        assert (tmp_path / "bounded" / rel).read_bytes() == (tmp_path / "free" / rel).read_bytes(), student
    with open(tmp_path / "bounded" / "grades.csv") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert rows["honest1"]["status"] == rows["honest2"]["status"] == rows["greedy"]["status"] == "graded"
    result = json.loads((tmp_path / "bounded" / "results" / "greedy.json").read_text())
    online = next(e for e in result["exercises"] if e["id"] == "online_softmax_attention")
    assert {c["kind"] for c in online["checks"]} & {"resources"}, online
    assert "attention_partial" in json.dumps(online)
    others = {e["id"]: e["score"] for e in result["exercises"] if e["id"] != "online_softmax_attention"}
    honest = {
        e["id"]: e["score"]
        for e in json.loads((tmp_path / "free" / "results" / "honest1.json").read_text())["exercises"]
    }
    assert all(others[k] == honest[k] for k in others), (others, honest)
