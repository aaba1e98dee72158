"""Find the submissions in a folder or an LMS export and name their students.

Layouts:
* nbgrader: ``[submitted/]<student>/<assignment>/*.ipynb``
* a flat folder of ``*.ipynb``: the student id is the file's stem
* a ``.zip``: Canvas names files ``name_[LATE_]<user id>_<submission id>_<original name>``; Gradescope
  exports ``submission_<id>/...`` folders with a ``submission_metadata.yml``; otherwise as a folder.

Duplicate rule: one notebook per student. When several are found, the one with the highest Canvas
submission id wins; elsewhere the one whose path sorts last. The others are reported, not graded.
"""
from __future__ import annotations

import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..errors import UsageError

CANVAS = re.compile(r"^(?P<name>[^_]+)_(?P<late>LATE_|late_)?(?P<user>\d+)_(?P<sub>\d+)_(?P<orig>.+)$")
MAX_ZIP_BYTES = 4 * 2**30
MAX_ZIP_FILES = 20_000


@dataclass(frozen=True)
class Job:
    student: str
    path: str  # the notebook to grade
    late: bool = False  # Canvas marked the submission LATE
    name: str = ""  # as the LMS names the student (Gradescope's name, Canvas's file-name prefix)
    email: str = ""  # Gradescope's submitter email


@dataclass(frozen=True)
class Person:
    """Who a submission belongs to, as the LMS export says."""
    student: str
    name: str = ""
    email: str = ""


@dataclass
class Discovery:
    jobs: list[Job] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    layout: str = ""
    workdir: str | None = None  # a temporary folder holding an extracted zip
    # Students a Canvas export names who handed in files but no notebook: student -> a Job for the first of
    # those files (name, late flag), and student -> the original names of all of them.
    without_notebook: dict[str, Job] = field(default_factory=dict)
    not_notebooks: dict[str, str] = field(default_factory=dict)

    def cleanup(self) -> None:
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


def _safe_extract(zip_path: Path) -> Path:
    target = Path(tempfile.mkdtemp(prefix="seqgrade-zip-"))
    try:
        with zipfile.ZipFile(zip_path) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ZIP_FILES or sum(i.file_size for i in infos) > MAX_ZIP_BYTES:
                raise UsageError(f"{zip_path} is too large to unpack ({len(infos)} files)")
            for info in infos:
                name = PurePosixPath(info.filename)
                if info.is_dir() or name.is_absolute() or ".." in name.parts or name.parts[0] == "__MACOSX":
                    continue
                dest = target.joinpath(*name.parts)
                dest.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)
    except zipfile.BadZipFile:
        shutil.rmtree(target, ignore_errors=True)
        raise UsageError(f"{zip_path} is not a readable zip file") from None
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return target


def _gradescope_names(root: Path) -> dict[str, Person]:
    """submission folder -> submitter, from Gradescope's submission_metadata.yml when present."""
    meta = next(iter(sorted(root.rglob("submission_metadata.yml"))), None)
    if meta is None:
        return {}
    try:
        import yaml

        data = yaml.safe_load(meta.read_text(encoding="utf-8", errors="replace")) or {}
    except Exception:
        return {}
    names = {}
    for folder, entry in data.items() if isinstance(data, dict) else []:
        submitters = entry.get(":submitters") or entry.get("submitters") or [] if isinstance(entry, dict) else []
        if submitters and isinstance(submitters[0], dict):
            s = submitters[0]
            email = str(s.get(":email") or s.get("email") or "")
            names[str(folder)] = Person(student=str(s.get(":sid") or s.get("sid") or email or folder),
                                        name=str(s.get(":name") or s.get("name") or ""), email=email)
    return names


def _candidates(root: Path, assignment: str) -> tuple[str, list[tuple[Person, Path, tuple]]]:
    """(layout, [(student, path, sort key)]) for every notebook found; the key's last part says "late"."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
    base = root / "submitted" if (root / "submitted").is_dir() else root
    nbgrader = [p for p in files if p.suffix == ".ipynb" and len(p.relative_to(base).parts) == 3
                and p.relative_to(base).parts[1] == assignment] if base.is_dir() else []
    if nbgrader:
        return "nbgrader", [(Person(p.relative_to(base).parts[0]), p, (str(p), False)) for p in nbgrader]
    gradescope = _gradescope_names(root)
    if gradescope or any(part.startswith("submission_") for p in files for part in p.relative_to(root).parts[:-1]):
        found = []
        for p in files:
            if p.suffix != ".ipynb":
                continue
            folder = next((part for part in p.relative_to(root).parts[:-1] if part.startswith("submission_")), None)
            if folder:
                found.append((gradescope.get(folder, Person(folder)), p, (str(p), False)))
        return "gradescope", found
    found = []
    for p in files:
        if p.suffix != ".ipynb":
            continue
        m = CANVAS.match(p.name)
        if m:
            found.append((Person(m["user"], name=m["name"]), p, (int(m["sub"]), str(p), bool(m["late"]))))
        else:
            found.append((Person(p.stem), p, (0, str(p), False)))
    layout = "canvas" if any(CANVAS.match(p.name) for _, p, _ in found) else "folder"
    return layout, found


def _canvas_without_notebook(result: Discovery, graded: set[str]) -> None:
    """Canvas names the student in every file's name: one who handed in only a PDF still gets a row."""
    for rel, why in result.skipped:
        m = CANVAS.match(PurePosixPath(rel).name)
        if m and why.startswith("not a notebook") and m["user"] not in graded:
            files = result.not_notebooks.get(m["user"])
            result.not_notebooks[m["user"]] = f"{files}, {m['orig']}" if files else m["orig"]
            result.without_notebook.setdefault(m["user"], Job(student=m["user"], path=rel, late=bool(m["late"]), name=m["name"]))


def discover(submissions: str | Path, assignment: str) -> Discovery:
    src = Path(submissions)
    if not src.exists():
        raise UsageError(f"no such file or folder: {src}")
    result = Discovery()
    if src.is_file():
        if src.suffix.lower() != ".zip":
            raise UsageError(f"{src} is a file but not a .zip export; pass a folder or a .zip")
        root = _safe_extract(src)
        result.workdir = str(root)
    else:
        root = src
    try:
        layout, found = _candidates(root, assignment)
        result.layout = layout
        notebooks = {p for _, p, _ in found}
        for p in sorted(root.rglob("*")):
            rel = p.relative_to(root)
            if p.is_file() and p not in notebooks and not any(part.startswith(".") for part in rel.parts) \
                    and p.name != "submission_metadata.yml":
                result.skipped.append((str(rel), "not a notebook (.ipynb)" if p.suffix != ".ipynb" else "not where this layout expects a submission"))
        by_student: dict[str, list] = {}
        for person, path, key in found:
            safe = re.sub(r"[^A-Za-z0-9_.@-]", "_", person.student)[:100] or "unknown"
            by_student.setdefault(safe, []).append((key, str(path), person))
        for student in sorted(by_student):
            entries = sorted(by_student[student], key=lambda e: (e[0], e[1]))
            key, chosen, person = entries[-1]
            chosen = Path(chosen)
            for _, other, _ in entries[:-1]:
                result.skipped.append((str(Path(other).relative_to(root)), f"duplicate for student {student}; graded {chosen.relative_to(root)} instead"))
            result.jobs.append(Job(student=student, path=str(chosen), late=key[-1], name=person.name, email=person.email))
        if layout == "canvas":
            _canvas_without_notebook(result, {job.student for job in result.jobs})
    except BaseException:
        result.cleanup()
        raise
    if not result.jobs:
        result.cleanup()
        raise UsageError(f"no notebooks found in {src}")
    return result
