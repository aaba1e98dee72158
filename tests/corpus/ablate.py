"""Take the sandbox's defences away one at a time and show that a corpus test fails each time.

For each ablation (tests/corpus/ablations.py) this copies the project's files to ``.ablations/NAME``,
applies the edit, and runs ``tests/test_corpus.py`` there, inside a memory and pids cgroup of its own so
that a removed limit harms that run and not the machine (everything left in it is killed afterwards).
A control run with no edit must pass; every ablation must make at least one test fail. Needs root and
cgroup v1 (the guard), and takes about two minutes an ablation on two cores.

    .venv/bin/python -m tests.corpus.ablate                      # the control and every ablation
    .venv/bin/python -m tests.corpus.ablate network_namespace    # the control and the ones named
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from grader.jail import isolation

from .ablations import ABLATIONS, Ablation, by_name
from .build import MARKERS

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / ".ablations"
GUARD_MEMORY = 10 * 2**30  # what one run may take in all: a removed memory limit stops here
GUARD_PIDS = 4096  # ... and a removed process limit here
RUN_TIMEOUT_S = 1500
CONTROL = Ablation("control", "(nothing removed)", (), slow=True)  # the baseline checks determinism too


class Stale(Exception):
    """An ablation's edit no longer matches the source it targets."""


def copy_project(dest: Path) -> None:
    listed = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def apply(ablation: Ablation, tree: Path) -> None:
    for edit in ablation.edits:
        path = tree / edit.path
        text = path.read_text()
        if text.count(edit.old) != 1:
            raise Stale(f"{ablation.name}: {edit.path} holds {text.count(edit.old)} copies of {edit.old!r}, not 1")
        path.write_text(text.replace(edit.old, edit.new))


class Guard:
    """A cgroup v1 memory+pids pair for one run; kills whatever is still in it when closed."""

    def __init__(self, name: str):
        self.dirs = []
        for controller, limits in (
            ("memory", {"memory.limit_in_bytes": GUARD_MEMORY}),
            ("pids", {"pids.max": GUARD_PIDS}),
        ):
            own = isolation.current_cgroup_dir(controller)
            if own is None:
                raise RuntimeError(f"no writable cgroup v1 {controller} hierarchy for the guard")
            d = Path(own) / f"seqgrade-ablate-{name}"
            d.mkdir(exist_ok=True)
            for fname, value in limits.items():
                (d / fname).write_text(str(value))
            self.dirs.append(d)

    def enter(self) -> None:  # in the child, before exec
        for d in self.dirs:
            (d / "cgroup.procs").write_text(str(os.getpid()))

    def close(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pids = {int(p) for d in self.dirs for procs in d.rglob("cgroup.procs") for p in procs.read_text().split()}
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        for d in self.dirs:
            for sub in [*sorted((p for p in d.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)), d]:
                try:
                    sub.rmdir()
                except OSError as exc:
                    print(f"ablate: could not remove the guard cgroup {sub}: {exc.strerror}", file=sys.stderr)


def failed_tests(junit: Path) -> list[str]:
    if not junit.exists():
        return []
    return [
        case.get("name", "?")
        for case in ET.parse(junit).getroot().iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    ]


def run(ablation: Ablation) -> dict:
    work = WORK / ablation.name
    shutil.rmtree(work, ignore_errors=True)
    tree = work / "repo"
    tree.mkdir(parents=True)
    copy_project(tree)
    apply(ablation, tree)
    for marker in MARKERS:
        marker.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(tree), "CI": "true", "PYTHONDONTWRITEBYTECODE": "1"}
    if ablation.select:
        env["SEQGRADE_CORPUS_SELECT"] = ",".join(ablation.select)
    where = subprocess.run(
        [sys.executable, "-c", "import grader; print(grader.__file__)"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not where.startswith(str(tree)):
        raise RuntimeError(f"the copy's grader is not the one imported ({where})")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/test_corpus.py",
        f"--basetemp={work / 'tmp'}",
        f"--junitxml={work / 'junit.xml'}",
    ]
    if not ablation.slow:
        command += ["-m", "not slow"]
    guard = Guard(ablation.name)
    start = time.monotonic()
    try:
        with open(work / "pytest.log", "w") as log:
            proc = subprocess.run(
                command,
                cwd=tree,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=guard.enter,
                timeout=RUN_TIMEOUT_S,
            )
        code = proc.returncode
    except subprocess.TimeoutExpired:
        code = "timeout"
    finally:
        guard.close()
        left = [str(m) for m in MARKERS if m.exists()]
        for marker in MARKERS:
            marker.unlink(missing_ok=True)
    return {
        "name": ablation.name,
        "defence": ablation.defence,
        "code": code,
        "failed": failed_tests(work / "junit.xml"),
        "seconds": time.monotonic() - start,
        "markers": left,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"ablations to run (default: all): {', '.join(by_name())}")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in by_name()]
    if unknown:
        parser.error(f"unknown ablation(s) {', '.join(unknown)}")
    if os.geteuid() != 0 or not Path("/sys/fs/cgroup/memory/cgroup.procs").exists():
        print("ablate: needs root and cgroup v1 (memory and pids) for the guard around each run", file=sys.stderr)
        return 2
    chosen = [CONTROL, *(by_name()[n] for n in args.names)] if args.names else [CONTROL, *ABLATIONS]
    ok = True
    for ablation in chosen:
        try:
            r = run(ablation)
        except Stale as exc:
            print(f"STALE   {exc}", flush=True)
            ok = False
            continue
        caught = bool(r["failed"]) or r["code"] not in (0, 5)
        good = not caught if ablation is CONTROL else caught
        ok &= good
        verdict = ("passes" if good else "FAILS") if ablation is CONTROL else ("caught" if caught else "NOT CAUGHT")
        shown = ", ".join(r["failed"][:4]) + (f" (+{len(r['failed']) - 4} more)" if len(r["failed"]) > 4 else "")
        print(
            f"{verdict:<11} {r['name']:<18} {r['seconds']:6.0f} s  exit {r['code']}  "
            f"{len(r['failed'])} failed: {shown or '-'}" + (f"  markers left: {r['markers']}" if r["markers"] else ""),
            flush=True,
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
