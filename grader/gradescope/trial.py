"""Trying an autograder zip before uploading it: its ``run_autograder`` on a notebook, in a folder laid out
as Gradescope lays out ``/autograder`` (``source/`` the unpacked zip, ``submission/`` the notebook,
``submission_metadata.json``), with this machine's Python standing in for the one setup.sh installs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from grader.errors import SeqgradeError, UsageError

TRY_TIMEOUT_S = 1200.0


class TrialFailed(SeqgradeError):
    """run_autograder left no readable results.json (its log says why)."""


@dataclass(frozen=True)
class Trial:
    results: dict  # results.json, as Gradescope would read it
    log: str  # what run_autograder printed: Gradescope shows it to staff only
    root: Path  # the fake /autograder


def unpack(zip_path: Path, source: Path) -> None:
    """Unpack like Gradescope: into ``source``, keeping the modes the zip records (run_autograder is executable)."""
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            target = source / info.filename
            if info.is_dir():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
            target.chmod((info.external_attr >> 16) & 0o777 or 0o644)


def default_metadata(now: datetime | None = None) -> dict:
    """A submission_metadata.json with no earlier submission, made now."""
    return {
        "id": 1,
        "created_at": (now or datetime.now(timezone.utc)).isoformat(),
        "previous_submissions": [],
        "users": [{"name": "Trying the autograder", "email": "", "id": 1}],
    }


def try_autograder(
    zip_path: str | Path,
    notebook: str | Path,
    work: str | Path,
    *,
    metadata: dict | None = None,
    python: str = sys.executable,
    env: dict | None = None,
) -> Trial:
    """Run ``zip_path``'s run_autograder on ``notebook`` in ``work/autograder`` and return what it wrote."""
    notebook, root = Path(notebook), Path(work) / "autograder"
    if not notebook.is_file():
        raise UsageError(f"no such notebook: {notebook}")
    if root.exists():
        shutil.rmtree(root)
    unpack(Path(zip_path), root / "source")
    (root / "submission").mkdir(parents=True)
    shutil.copyfile(notebook, root / "submission" / notebook.name)
    (root / "submission_metadata.json").write_text(json.dumps(metadata or default_metadata(), indent=2) + "\n")
    run_env = {**os.environ, "SEQGRADE_PYTHON": python, **(env or {})}
    run_env.pop("PYTHONPATH", None)  # the zip's own copy of seqgrade is what runs
    try:
        proc = subprocess.run(
            [str(root / "source" / "run_autograder"), str(root)],
            cwd=root,
            env=run_env,
            capture_output=True,
            text=True,
            timeout=TRY_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        raise TrialFailed(f"run_autograder did not finish within {TRY_TIMEOUT_S:g} s") from exc
    log = proc.stdout + proc.stderr
    try:
        results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TrialFailed(f"run_autograder left no readable results.json ({exc}); its log:\n{log[-3000:]}") from None
    return Trial(results, log, root)
