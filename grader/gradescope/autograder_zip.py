"""Build the zip Gradescope's "Configure Autograder" page takes: setup.sh and run_autograder at its root,
seqgrade's own source (``seqgrade/grader``, ``seqgrade/reference``), the pins, and ``seqgrade.json``.

The zip is byte-for-byte reproducible: members are sorted and carry a fixed date and fixed modes.
"""

from __future__ import annotations

import importlib.metadata
import io
import re
import sys
import zipfile
from pathlib import Path

from grader.assignments.registry import get_assignment
from grader.errors import OutputNotWritable, UsageError
from grader.fsutil import write_atomic
from grader.version import __version__

from .config import CONFIG_NAME, AutograderConfig
from .rate_limit import RateLimit
from .scripts import RUN_AUTOGRADER, SETUP_SH

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("grader", "reference")
PREFIX = "/opt/seqgrade"  # where setup.sh installs Python and the dependencies inside the image
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the oldest date a zip can hold: same input, same bytes


def _requirement_name(req: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def runtime_requirements() -> list[str]:
    """seqgrade's own dependencies (no extras), torch left out: setup.sh installs its CPU build first."""
    try:
        import tomllib

        deps = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    except (ImportError, OSError):
        deps = [r for r in importlib.metadata.requires("seqgrade") or [] if "extra ==" not in r]
    return [d for d in deps if _requirement_name(d) != "torch"]


def pinned(name: str, constraints: str) -> str:
    """``name==version`` from constraints.txt, else from this environment (torch is not in constraints.txt)."""
    for line in constraints.splitlines():
        line = line.split("#")[0].strip()
        if line and _requirement_name(line) == name:
            return line
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        raise UsageError(
            f"cannot tell which {name} to install: it is neither pinned in constraints.txt nor installed here"
        ) from None
    return f"{name}=={version.split('+')[0]}"  # "2.13.0+cpu": the CPU index's wheels match "==2.13.0"


def _source_files() -> list[tuple[str, bytes]]:
    files = []
    for package in PACKAGES:
        for path in sorted((PROJECT_ROOT / package).rglob("*")):
            rel = path.relative_to(PROJECT_ROOT)
            if path.is_file() and "__pycache__" not in rel.parts and path.suffix not in (".pyc", ".pyo"):
                files.append((f"seqgrade/{rel.as_posix()}", path.read_bytes()))
    files.append(("seqgrade/pyproject.toml", (PROJECT_ROOT / "pyproject.toml").read_bytes()))
    return files


def autograder_members(
    assignment_id: str, *, visibility: str = "visible", rate_limit: str = ""
) -> list[tuple[str, bytes, int]]:
    """Every member of the zip as (name, content, mode)."""
    assignment = get_assignment(assignment_id)
    if not (PROJECT_ROOT / "constraints.txt").is_file():
        raise UsageError(
            f"the Gradescope zip packs seqgrade's source tree and its constraints.txt, which an installed seqgrade "
            f"({PROJECT_ROOT}) does not have: build the zip from a checkout of seqgrade"
        )
    constraints = (PROJECT_ROOT / "constraints.txt").read_text(encoding="utf-8")
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    torch = pinned("torch", constraints)
    try:
        config = AutograderConfig(
            assignment=assignment.id,
            visibility=visibility,
            seqgrade_version=__version__,
            python=python,
            torch=torch.split("==")[-1],
            rate_limit=rate_limit,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    fields = dict(assignment=assignment.id, python=python, prefix=PREFIX, torch=torch, uv=pinned("uv", constraints))
    members = [
        ("setup.sh", SETUP_SH.format(**fields).encode(), 0o755),
        ("run_autograder", RUN_AUTOGRADER.format(**fields).encode(), 0o755),
        (CONFIG_NAME, config.to_json().encode(), 0o644),
        ("constraints.txt", constraints.encode(), 0o644),
        ("requirements.txt", ("\n".join(runtime_requirements()) + "\n").encode(), 0o644),
    ]
    members += [(name, data, 0o644) for name, data in _source_files()]
    return members


def build_autograder(assignment_id: str, out: str | Path, *, visibility: str = "visible", rate_limit: str = "") -> Path:
    """Write the autograder zip for one assignment to ``out`` (atomically) and return its path. ``rate_limit``
    ("N/PERIOD", see :mod:`.rate_limit`) grades at most N submissions of a student per period."""
    if rate_limit:
        RateLimit.parse(rate_limit)  # a usage error now, not in every student's run
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in autograder_members(assignment_id, visibility=visibility, rate_limit=rate_limit):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.external_attr = (0o100000 | mode) << 16  # a regular file with these permission bits
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    out = Path(out)
    try:
        write_atomic(out, buf.getvalue())
    except OSError as exc:
        raise OutputNotWritable(out, exc.strerror or str(exc)) from None
    return out
