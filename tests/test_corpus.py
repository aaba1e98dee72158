"""The corpora (tests/corpus/): hostile submissions gain nothing and harm nothing, plausible wrong
solutions lose exactly the points they should, odd notebook structures get their expected result,
and the whole batch is deterministic. One batch grades everything together, as a TA's would."""

import csv
import hashlib
import json
import os
import secrets
import time
from pathlib import Path

import pytest

from grader.assignments.registry import SEQUENCE_MODELS
from grader.batch.identity import file_stem
from grader.batch.run import BatchConfig, run_batch
from grader.jail.limits import Limits
from grader.sandbox.cpus import cpu_for

from .corpus import recorded
from .corpus.build import MARKERS, build_corpus, generated_degenerate, load, validate_entries
from .corpus.cpuload import CpuLoad
from .corpus.watch import Listener, ResourceWatch, sandbox_processes

ROOT = Path(__file__).resolve().parents[1]
# Calls and cells are stopped by CPU time or by waiting without computing; the wall-clock backstop of a call
# is set far above what a memory bomb's page faults take on a loaded machine (its system time alone varied from
# 0.1 to 1.6 s here; in a full parallel run of the tests its call, about 0.6 s of CPU, met the default 10 s).
LIMITS = Limits(cell_cpu_s=2, cell_timeout_s=10, call_timeout_s=60, submission_timeout_s=120)
FULL = {e.id: e.points for e in SEQUENCE_MODELS.exercises if e.kind != "manual"}
AUTO_MAX = sum(FULL.values())
BATCH_BOUND_S = 600
# A token in the grading process's environment, as a TA's LMS token would be: no output may show it.
SECRET_NAME, SECRET = "SEQGRADE_CORPUS_SECRET_TOKEN", f"corpus-secret-{secrets.token_hex(8)}"
# Only these corpus entries are graded when set (comma-separated patterns of student ids): for runs
# that remove a defence on purpose (tests/corpus/ablate.py), never for CI.
SELECT = [p for p in os.environ.get("SEQGRADE_CORPUS_SELECT", "").split(",") if p]


def _tree_digest(root: Path) -> dict:
    digest = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not {
            ".venv",
            ".git",
            "__pycache__",
            ".pytest_cache",
            ".hypothesis",
            ".ruff_cache",
            "demo-out",
            ".ablations",
        } & set(rel.parts):
            digest[str(rel)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest


@pytest.fixture(scope="module")
def corpus(released, tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    out = root / "out"
    entries = build_corpus(released[1], root / "submissions", project=ROOT, out=out, select=SELECT)
    before = _tree_digest(ROOT)
    etc_profile = Path("/etc/profile").read_bytes() if Path("/etc/profile").exists() else None
    for marker in MARKERS:  # left by an earlier run that failed: start clean
        marker.unlink(missing_ok=True)
    listener, watch = Listener(), ResourceWatch()
    os.environ[SECRET_NAME] = SECRET  # the batch's worker processes inherit it
    start = time.monotonic()
    try:
        report = run_batch(
            BatchConfig(str(root / "submissions"), "sequence_models", str(out), workers=2, limits=LIMITS)
        )
    finally:
        del os.environ[SECRET_NAME]
        listener.close()
        watch.close()
    elapsed = time.monotonic() - start
    deadline = time.monotonic() + 15  # worker zygotes exit when their worker's control socket closes
    while sandbox_processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    results = {
        s: json.loads(path.read_text()) if (path := out / "results" / f"{file_stem(s)}.json").exists() else None
        for s in entries
    }
    return {
        "entries": entries,
        "results": results,
        "report": report,
        "elapsed": elapsed,
        "out": out,
        "root": root,
        "before": before,
        "after": _tree_digest(ROOT),
        "listener": listener.connections,
        "etc_profile": etc_profile,
        "left": sandbox_processes(),
        "watch": watch,
        "markers": [str(m) for m in MARKERS if m.exists()],
    }


def _entry(corpus, student: str):
    if student not in corpus["entries"]:
        pytest.skip(f"{student} is not among the selected corpus entries ({','.join(SELECT)})")
    return corpus["entries"][student]


def _result(corpus, student: str) -> dict:
    """The student's result; a lost grade fails the test that needs it, not the whole corpus."""
    result = corpus["results"][student]
    assert result is not None, f"{student} has no result: the batch lost its grade"
    return result


def scores(result) -> dict:
    return {e["id"]: e["score"] for e in result["exercises"] if e["id"] in FULL}


def test_results_are_byte_identical_to_the_recorded_ones(corpus):
    """Every result JSON is the bytes recorded before (tests/corpus/recorded.py): a change to how the grader
    runs the checks (speed, protocol) moves no grade, no message and no hint."""
    found = recorded.digests(corpus["out"] / "results", "sequence_models", (ROOT, corpus["root"]))
    if recorded.RECORDING:
        recorded.record("sequence_models", found)
        pytest.skip(f"recorded {len(found)} results")
    assert recorded.differences("sequence_models", found, whole=not SELECT) == []


def test_corpus_files_are_well_formed_and_large_enough():
    assert validate_entries() == []
    assert len(load("hostile")) >= 20 and len(load("wrong")) >= 30 and len(load("structure")) >= 12
    assert len(load("forgery")) >= 6 and len(load("degenerate")) >= 5 and len(load("alternative")) >= 2


def test_batch_finishes_within_its_bound_and_leaves_nothing_behind(corpus):
    assert corpus["elapsed"] < BATCH_BOUND_S
    assert corpus["report"].failed == 0
    assert corpus["left"] == []
    assert corpus["listener"] == []
    assert corpus["before"] == corpus["after"]
    assert (Path("/etc/profile").read_bytes() if Path("/etc/profile").exists() else None) == corpus["etc_profile"]
    assert corpus["markers"] == []
    with open(corpus["out"] / "grades.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(corpus["entries"]) and all("pwned" not in json.dumps(r) for r in rows)


def test_no_output_shows_the_grading_machines_secrets(corpus):
    leaked = [
        str(p.relative_to(corpus["out"]))
        for p in sorted(corpus["out"].rglob("*"))
        if p.is_file() and SECRET.encode() in p.read_bytes()
    ]
    assert leaked == []


@pytest.mark.skipif(os.geteuid() != 0, reason="sandbox users have uids of their own only when grading as root")
def test_no_notebook_exceeded_its_process_and_memory_limits(corpus):
    """Sampled every 50 ms: tasks of one sandbox user, private memory of one process and of one user."""
    watch = corpus["watch"]
    assert watch.samples_with_sandboxes > 10  # the watch really saw the batch
    assert watch.tasks <= LIMITS.nproc
    assert watch.process_mb <= LIMITS.memory_mb + 512
    assert watch.user_mb <= LIMITS.total_memory_mb + 512


def test_honest_submissions_get_full_marks(corpus):
    for student, entry in corpus["entries"].items():
        if entry.kind == "honest":
            assert scores(_result(corpus, student)) == FULL, student


def _honest_scores(corpus, entry) -> dict:
    honest = dict(FULL)
    if entry.data["HONEST"]:
        honest.update(scores(_result(corpus, f"wrong-{entry.data['HONEST']}")))
    for gid in entry.data["ATTACK"]:
        if gid in honest:
            honest[gid] = 0.0  # the attack replaced that cell: its honest content is nothing
    return honest


@pytest.mark.parametrize("name", [e.name for e in load("hostile")])
def test_hostile_submission_earns_at_most_its_honest_content(corpus, name):
    entry = _entry(corpus, f"hostile-{name}")
    got = scores(_result(corpus, f"hostile-{name}"))
    honest = _honest_scores(corpus, entry)
    for ex, points in got.items():
        assert points <= honest[ex] + 1e-9, (ex, points, honest[ex])
    touched = set(entry.data["ATTACK"]) | set(entry.data["TOUCHES"])
    if entry.data["HONEST"]:
        touched |= set(corpus["entries"][f"wrong-{entry.data['HONEST']}"].data["FAILS"])
    # The student's own code for an exercise that calls an attacked function breaks with it (as it would
    # with an honest stub in its place).
    touched |= {e.id for e in SEQUENCE_MODELS.exercises if set(e.requires) & touched}
    if "*" not in touched:
        unchanged = {ex: got[ex] for ex in FULL if ex not in touched}
        assert unchanged == {ex: FULL[ex] for ex in unchanged}, "honest exercises lost points"


@pytest.mark.parametrize("name", [e.name for e in load("wrong")])
def test_wrong_solution_loses_exactly_the_declared_points(corpus, name):
    entry = _entry(corpus, f"wrong-{name}")
    result = _result(corpus, f"wrong-{name}")
    fails = entry.data["FAILS"]
    for ex in result["exercises"]:
        if ex["id"] not in FULL:
            continue
        if ex["id"] not in fails:
            assert ex["score"] == FULL[ex["id"]], f"{ex['id']} lost points it should not have"
            continue
        # One mistake, one charge: exactly the declared checks fail, every other check of the exercise passes.
        failed = [c["name"] for c in ex["checks"] if c["status"] != "passed"]
        assert failed == fails[ex["id"]], f"{ex['id']}: failed {failed}, declared {fails[ex['id']]}"
        assert all(c["points"] == 0 and c["message"] for c in ex["checks"] if c["name"] in failed)
        assert ex["root_cause"], "the feedback names no root cause"


@pytest.mark.parametrize("name", [e.name for e in load("forgery")])
def test_forgery_earns_no_more_than_its_honest_work(corpus, name):
    """Each way of forging what the grader observes (decoy calls, recorder state, a patched protocol module,
    an oracle-aware or rarely-wrong helper) earns at most what its honest code deserves."""
    entry = _entry(corpus, f"forgery-{name}")
    got = scores(_result(corpus, f"forgery-{name}"))
    for ex, points in got.items():
        assert points <= entry.data["HONEST"].get(ex, FULL[ex]) + 1e-9, (ex, points)
        if ex not in entry.data["HONEST"]:
            assert points == FULL[ex], f"{ex} lost points it should not have"


@pytest.mark.parametrize("name", [e.name for e in load("degenerate") + generated_degenerate()])
def test_degenerate_code_earns_nothing(corpus, name):
    """Constants, zeros of the right shape, echoes, always-raise, the released stubs and code that ignores one
    of its main inputs (generated: each input in turn) earn no point, from any check, properties included; the
    answers around them keep theirs."""
    entry = _entry(corpus, f"degenerate-{name}")
    result = _result(corpus, f"degenerate-{name}")
    earned = {
        (e["id"], c["name"]): c["points"]
        for e in result["exercises"]
        if e["id"] in entry.data["REPLACE"]
        for c in e["checks"]
        if c["points"]
    }
    assert earned == {}
    assert {ex: pts for ex, pts in scores(result).items() if ex not in entry.data["REPLACE"]} == {
        ex: pts for ex, pts in FULL.items() if ex not in entry.data["REPLACE"]
    }


@pytest.mark.parametrize("name", [e.name for e in load("alternative")])
def test_correct_alternative_keeps_full_marks(corpus, name):
    """Other correct forms (torch.broadcast_shapes, torch.func, einsum, float64 arithmetic, in-place updates)
    keep every point."""
    _entry(corpus, f"alternative-{name}")
    assert scores(_result(corpus, f"alternative-{name}")) == FULL


@pytest.mark.parametrize("name", [e.name for e in load("structure")])
def test_structure_variant_gets_its_expected_result(corpus, name):
    entry = next((e for e in corpus["entries"].values() if e.kind == "structure" and e.name == name), None)
    if entry is None:
        pytest.skip(f"structure/{name} is not among the selected corpus entries")
    result = _result(corpus, entry.student)
    expect = entry.data["EXPECT"]
    assert result["status"] == expect["status"], result["reason"]
    if expect.get("score") == "full":
        assert scores(result) == FULL
    if "reason" in expect:
        assert expect["reason"] in result["reason"]
    for ex in expect.get("missing", []):
        assert {c["status"] for e in result["exercises"] if e["id"] == ex for c in e["checks"]} == {"missing"}
    if "lost" in expect:
        lost = {ex for ex, pts in scores(result).items() if pts < FULL[ex]}
        assert lost <= set(expect["lost"]) and set(expect["missing"]) <= lost
    if result["status"] != "graded":
        assert result["score"] == 0


def _load_sample(entries: dict) -> list[str]:
    """The entries graded again under load: every one whose grade a timeout, a limit or the protocol decides
    (hostile, forgery, degenerate, alternative), one honest copy, and every third wrong and structure entry."""
    always = sorted(s for s, e in entries.items() if e.kind in ("hostile", "forgery", "degenerate", "alternative"))
    thirds = [
        s for kind in ("wrong", "structure") for s in sorted(s for s, e in entries.items() if e.kind == kind)[::3]
    ]
    return always + [s for s in ("honest-0",) if s in entries] + thirds


@pytest.mark.slow
def test_whole_corpus_is_deterministic_across_runs_worker_counts_and_load(corpus):
    """The corpus graded again, now with one worker and the CPU it grades on kept busy by another process (the
    batch then has half of it), gives byte-identical grades.csv rows and JSON: timeouts count CPU time, so the
    machine's load changes nothing.
    A sample is graded again (_load_sample: everything a limit decides), the same files linked into a folder
    of their own."""
    again, out2 = corpus["root"] / "submissions-again", corpus["root"] / "out-again"
    again.mkdir()
    sample = _load_sample(corpus["entries"])
    for path in (corpus["root"] / "submissions").iterdir():
        if path.stem in sample:
            os.link(path, again / path.name)  # the very same bytes under the same name
    cpu = cpu_for(0)  # where the batch's one worker grades, and its jails run (grader.sandbox.cpus)
    load = CpuLoad(cpus=[cpu] if cpu is not None else None)
    try:
        run_batch(BatchConfig(str(again), "sequence_models", str(out2), workers=1, limits=LIMITS))
    finally:
        load.close()
    first = (corpus["out"] / "grades.csv").read_text().splitlines()
    rows = {row.split(",", 1)[0]: row for row in first[1:]}
    rows_again = (out2 / "grades.csv").read_text().splitlines()
    assert len(rows_again) == len(sample) + 1 and rows_again[0] == first[0]
    assert [row for row in rows_again[1:] if rows.get(row.split(",", 1)[0]) != row] == []
    for student in sample:
        rel = Path("results") / f"{file_stem(student)}.json"
        assert (out2 / rel).read_bytes() == (corpus["out"] / rel).read_bytes(), student
