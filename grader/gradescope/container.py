"""What the zip's run_autograder does inside Gradescope's container, once per submission: find the one
submitted notebook, pick the strongest isolation the container allows, grade it, and leave a valid
``results/results.json`` whatever happens (a missing file shows the student only a generic error)."""

from __future__ import annotations

import json
import os
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from grader.errors import OutputNotWritable, SandboxUnavailable, SeqgradeError, UsageError
from grader.fsutil import write_atomic
from grader.version import __version__

from .config import CONFIG_NAME, AutograderConfig
from .rate_limit import RateLimit, limited_results
from .results_json import results_for_failure, results_from_notebook

DEFAULT_ROOT = "/autograder"
ROOT_ENV = "SEQGRADE_AUTOGRADER_ROOT"  # another root than /autograder (tests build a fake tree)
ISOLATION_ENV = "SEQGRADE_ISOLATION"  # force one level instead of the strongest available
SKIPPED_PARTS = {".ipynb_checkpoints", "__MACOSX"}


class NoSubmission(SeqgradeError):
    """The submission holds no notebook, or several: the student must resubmit (score 0, reason shown)."""


@dataclass(frozen=True)
class ContainerRun:
    """What one run inside the container did; the CLI prints it to the autograder log (staff only)."""

    results_path: str
    graded: bool  # False when results.json only says why nothing could be graded
    score: float
    max_score: float
    isolation: str  # "namespaces", "rlimits", or "" when grading did not start
    summary: str
    detail: str = ""  # the traceback of a fault of the grader itself, for course staff


def default_root() -> Path:
    return Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT)


def find_notebook(folder: Path) -> Path:
    """The one .ipynb under ``folder`` (any name, any depth; editor checkpoints and macOS zip debris skipped).
    Symbolic links are never followed: one could point the grader, which runs as root, at another file."""
    if not folder.is_dir():
        raise NoSubmission(f"no submission folder was found ({folder}); please submit your notebook again.")
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not p.is_symlink() and not SKIPPED_PARTS & set(p.relative_to(folder).parts)
    )
    notebooks = [p for p in files if p.suffix.lower() == ".ipynb"]
    if len(notebooks) == 1:
        return notebooks[0]
    names = ", ".join(str(p.relative_to(folder)) for p in (notebooks or files)[:6]) or "nothing"
    if notebooks:
        raise NoSubmission(
            f"the submission holds {len(notebooks)} notebooks ({names}); submit only the one "
            f"notebook of this assignment."
        )
    raise NoSubmission(
        f"the submission holds no Jupyter notebook (.ipynb); found: {names}. Submit your "
        f"notebook file itself (File > Download as .ipynb), not a PDF, script or folder."
    )


def pick_isolation(requested: str | None = None) -> tuple[str, str]:
    """The isolation level to grade with and why: namespaces where the container allows them (it runs as
    root, and Docker's default seccomp profile refuses unshare), else rlimits."""
    from grader.jail.limits import ISOLATION_LEVELS
    from grader.sandbox.jails import check_isolation

    if requested:
        if requested not in ISOLATION_LEVELS:
            raise UsageError(f"{ISOLATION_ENV} must be one of {', '.join(ISOLATION_LEVELS)}; got {requested!r}")
        check_isolation(requested)
        return requested, f"{requested}, as {ISOLATION_ENV} asks"
    try:
        check_isolation("namespaces")
        return "namespaces", "namespaces (this container allows them)"
    except SandboxUnavailable as exc:
        check_isolation("rlimits")
        return "rlimits", f"rlimits: namespaces are not available in this container ({exc})"


def _grade(root: Path, config: AutograderConfig, extra: dict) -> tuple[dict, float, float, str]:
    notebook = find_notebook(root / "submission")  # before the imports below, which take seconds (torch)
    from grader.assignments.registry import get_assignment
    from grader.grading import Grader
    from grader.jail.limits import Limits

    assignment = get_assignment(config.assignment)
    level, why = pick_isolation(os.environ.get(ISOLATION_ENV) or None)
    extra.update(isolation=level, isolation_reason=why, notebook=str(notebook.relative_to(root / "submission")))
    (root / "results").mkdir(parents=True, exist_ok=True)  # hidden from the student's process, so it must exist
    with Grader(Limits(isolation=level), hide=[str(root / "results"), str(root / "submission")]) as grader:
        result = grader.grade(notebook, assignment.id, display_name=notebook.name)
    extra.update(status=result.status)
    data = results_from_notebook(result, visibility=config.visibility, extra=extra)
    return data, result.score, result.gradable_points, level


def run_in_container(root: Path | None = None) -> ContainerRun:
    """Grade ``root/submission`` with the zip's configuration and write ``root/results/results.json``."""
    root = Path(root) if root is not None else default_root()
    out = root / "results" / "results.json"
    started = time.monotonic()
    extra: dict = {"seqgrade_version": __version__}
    visibility, detail, graded, score, max_score, level = "visible", "", False, 0.0, 0.0, ""
    try:
        config = AutograderConfig.from_json((root / "source" / CONFIG_NAME).read_text(encoding="utf-8"))
        visibility = config.visibility
        extra["assignment"] = config.assignment
        limited = limited_results(root, RateLimit.parse(config.rate_limit)) if config.rate_limit else None
        if limited is not None:  # the limit is reached: the last graded result again, saying so
            data, score = limited, float(limited.get("score") or 0)
        else:
            data, score, max_score, level = _grade(root, config, extra)
            graded = True
    except NoSubmission as exc:
        data = results_for_failure(f"Not graded: {exc}", visibility=visibility, extra=extra)
    except Exception as exc:  # noqa: BLE001 (any fault of the grader must still leave a valid results.json)
        detail = traceback.format_exc()
        data = results_for_failure(
            f"Not graded: the autograder itself failed ({type(exc).__name__}: {exc}). This is not a problem "
            f"with your notebook; please tell course staff.",
            visibility=visibility,
            extra=extra,
        )
    # whether a notebook was graded: the rate limit counts only those (grader.gradescope.rate_limit)
    data.setdefault("extra_data", {}).setdefault("seqgrade", {})["graded"] = graded
    data["execution_time"] = round(time.monotonic() - started)  # seconds, as Gradescope's spec has it
    try:
        write_atomic(out, json.dumps(data, indent=2, allow_nan=False) + "\n")
    except OSError as exc:  # run_autograder then tries to write its own, simpler one
        raise OutputNotWritable(out, exc.strerror or str(exc)) from None
    return ContainerRun(
        results_path=str(out),
        graded=graded,
        score=score,
        max_score=max_score,
        isolation=level,
        summary=data["output"],
        detail=detail,
    )
