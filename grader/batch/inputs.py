"""Find the submissions in a folder or an LMS export and name their students.

Layouts, the first that fits:
* Gradescope: ``submission_<digits>/...`` folders at the export's top (or in one folder around it) with a
  ``submission_metadata.yml`` beside them (without it: notebooks in such folders and none with a Canvas name);
  a metadata file or a ``submission_<digits>`` folder inside a submission is the student's, never the export's
* Canvas, every notebook named ``name_[LATE_]<user id>_<submission id>_<original name>`` (at any depth)
* nbgrader: ``[submitted/]<student>/<assignment>/*.ipynb``
* Canvas, where some notebooks are named so; otherwise a folder of ``*.ipynb`` (the student id is the stem).
An export is tried as an LMS's before nbgrader's tree, whose pattern a re-zipped export can fit by chance.

Identity: the student id is exactly the text the input gives (Unicode, spaces and case kept); two
different ids are two students, and the files made for them are named by ``identity.file_stem``.

Submission times (for a late policy): a Canvas export's file times (the zip entry's time, which has no
zone), Gradescope's ``:created_at``; a folder's (or other zip's) file times only when asked
(``file_times``), since copying files changes them.

Several notebooks of one student: one is graded, by the rule of grader.batch.choice (the latest submission, one
that can be read, the assignment's notebook name, then the newest); the others are reported, and the student's
row names the one graded and the ones left out (``Job.chosen``).

Archives and folders are read by grader.batch.entries; an entry that could not be unpacked, or a file in a folder
that is a symbolic link, is its student's problem (``Discovery.unreadable``), listed as skipped too.
"""

from __future__ import annotations

import datetime
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader.errors import UsageError

from .choice import choose, duplicate_reason
from .entries import METADATA, Entry, folder_entries, zip_entries
from .late import ARCHIVE_TIME
from .record import NO_FILES

CANVAS = re.compile(r"^(?P<name>[^_]+)_(?P<late>LATE_|late_)?(?P<user>\d+)_(?P<sub>\d+)_(?P<orig>.+)$")
SUBMISSION_FOLDER = re.compile(r"^submission_\d+$")  # Gradescope's folder of one submission
TOP_PARTS = 2  # Gradescope's folders lie at the export's top, or in one folder around them


@dataclass(frozen=True)
class Job:
    student: str
    path: str  # the notebook to grade (for an unreadable one: its name in the input)
    late: bool = False  # Canvas marked the submission LATE
    name: str = ""  # as the LMS names the student (Gradescope's name, Canvas's file-name prefix)
    email: str = ""  # Gradescope's submitter email
    problem: str = ""  # why the notebook could not be unpacked or read ("" for one to grade)
    submitted: str = ""  # ISO 8601 time of the submission, as the export gives it ("" when unknown)
    submitted_from: str = ""  # where that time comes from, in words
    chosen: str = ""  # which of the student's several notebooks is graded and which are not ("" for one)


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
    # Students a Canvas or Gradescope export names who handed in files but no notebook: student -> a Job for
    # the first of those files (name, email, late flag), and student -> the original names of all of them.
    without_notebook: dict[str, Job] = field(default_factory=dict)
    not_notebooks: dict[str, str] = field(default_factory=dict)
    # Students whose submission could not be unpacked: one Job each, its ``problem`` saying why (their row
    # is "invalid" with that reason).
    unreadable: list[Job] = field(default_factory=list)

    def every_job(self) -> list[Job]:
        """One Job for each row of the batch: the notebooks to grade, the submissions that could not be unpacked and
        the students who handed in no notebook."""
        return [*self.jobs, *self.unreadable, *self.without_notebook.values()]

    def cleanup(self) -> None:
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


@dataclass(frozen=True)
class Candidate:
    person: Person
    entry: Entry
    rank: tuple  # of the submission it comes from: of one student's, the highest counts (grader.batch.choice)
    late: bool = False
    submitted: str = ""
    submitted_from: str = ""
    shown: str = ""  # its name as the student gave it
    canvas_number: tuple = ()  # (the number Canvas gives the file,), on Canvas


def _when(value) -> datetime.datetime | None:
    """A submission time from Gradescope's metadata (YAML gives a datetime; text is read as ISO 8601)."""
    if isinstance(value, str):
        try:
            value = datetime.datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if not isinstance(value, datetime.datetime):
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=datetime.timezone.utc)


def submission_folder(e: Entry) -> str | None:
    """The Gradescope submission folder ``e`` lies in: the outermost ``submission_<digits>`` folder among the
    export's top TOP_PARTS levels (a folder of that name deeper down is one a student uploaded)."""
    return next((part for part in e.parts[:-1][:TOP_PARTS] if SUBMISSION_FOLDER.match(part)), None)


def _metadata_entry(entries: list[Entry]) -> Entry | None:
    """The export's submission_metadata.yml: the shallowest one at its top, never one inside a submission (a
    student's upload must not rename the class)."""
    found = [
        e
        for e in entries
        if e.name == METADATA and e.path is not None and len(e.parts) <= TOP_PARTS and submission_folder(e) is None
    ]
    return min(found, key=lambda e: (len(e.parts), e.parts, e.order), default=None)


def _metadata(entries: list[Entry]) -> tuple[object, str]:
    """(what the export's submission_metadata.yml holds, or None; why it could not be read, or "")."""
    meta = _metadata_entry(entries)
    if meta is None:
        return None, ""
    try:
        import yaml

        return yaml.safe_load(meta.path.read_text(encoding="utf-8", errors="replace")) or {}, ""
    except Exception as exc:  # an unreadable metadata file: the folders name the submissions
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        return None, f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def _gradescope_people(data) -> dict[str, tuple[list[Person], datetime.datetime | None, str]]:
    """submission folder -> (its submitters, its time, that time as the metadata writes it), from what Gradescope's
    submission_metadata.yml holds (``_metadata``)."""
    found = {}
    for folder, entry in data.items() if isinstance(data, dict) else []:
        entry = entry if isinstance(entry, dict) else {}
        people = []
        for s in entry.get(":submitters") or entry.get("submitters") or []:  # a group submission has several
            if isinstance(s, dict):
                email = str(s.get(":email") or s.get("email") or "")
                people.append(
                    Person(
                        student=str(s.get(":sid") or s.get("sid") or email or folder),
                        name=str(s.get(":name") or s.get("name") or ""),
                        email=email,
                    )
                )
        created = entry.get(":created_at") or entry.get("created_at")
        found[str(folder)] = (people or [Person(str(folder))], _when(created), "" if created is None else str(created))
    return found


def _candidates(
    entries: list[Entry], assignment: str, gradescope: dict, file_times: bool = False
) -> tuple[str, list[Candidate]]:
    """(layout, a candidate for every notebook found and every student it belongs to); ``gradescope``: the
    submitters Gradescope's metadata names (``_gradescope_people``); ``file_times``: a folder's notebooks carry
    their file times as submission times."""
    own = (lambda e: (e.time, "file time")) if file_times else (lambda e: ("", ""))
    notebooks = [e for e in entries if e.name.endswith(".ipynb")]
    in_folders = any(submission_folder(e) for e in notebooks)
    canvas_named = [bool(CANVAS.match(e.name)) for e in notebooks]
    if gradescope or (in_folders and not any(canvas_named)):
        found = []
        for e in notebooks:
            folder = submission_folder(e)
            if folder:
                people, when, written = gradescope.get(folder, ([Person(folder)], None, ""))
                rank = (when.timestamp() if when else float("-inf"),)
                # a time that cannot be read is kept as written: the late policy says so on the row
                stamp = (when.isoformat() if when else written, "Gradescope created_at") if when or written else own(e)
                found += [Candidate(person, e, rank, False, *stamp, shown=e.name) for person in people]
        return "gradescope", found
    base = ("submitted",) if any(len(e.parts) > 1 and e.parts[0] == "submitted" for e in entries) else ()
    nbgrader = [
        e
        for e in notebooks
        if len(e.parts) == len(base) + 3 and e.parts[: len(base)] == base and e.parts[len(base) + 1] == assignment
    ]
    if nbgrader and not all(canvas_named):  # every notebook named by Canvas: a Canvas export, however deep
        return "nbgrader", [
            Candidate(Person(e.parts[len(base)]), e, (), False, *own(e), shown=e.name) for e in nbgrader
        ]
    found = []
    for e in notebooks:
        m = CANVAS.match(e.name)
        if m:
            found.append(
                Candidate(
                    Person(m["user"], name=m["name"]),
                    e,
                    (),
                    bool(m["late"]),
                    e.time,
                    ARCHIVE_TIME if e.time else "",
                    shown=m["orig"],
                    canvas_number=(int(m["sub"]),),
                )
            )
        else:
            found.append(Candidate(Person(PurePosixPath(e.name).stem), e, (), False, *own(e), shown=e.name))
    return "canvas" if any(CANVAS.match(c.entry.name) for c in found) else "folder", found


def _canvas_without_notebook(result: Discovery, named: set[str]) -> None:
    """Canvas names the student in every file's name: one who handed in only a PDF still gets a row."""
    for rel, why in result.skipped:
        m = CANVAS.match(PurePosixPath(rel).name)
        if m and why.startswith("not a notebook") and m["user"] not in named:
            files = result.not_notebooks.get(m["user"])
            result.not_notebooks[m["user"]] = f"{files}, {m['orig']}" if files else m["orig"]
            result.without_notebook.setdefault(
                m["user"], Job(student=m["user"], path=rel, late=bool(m["late"]), name=m["name"])
            )


def _gradescope_without_notebook(result: Discovery, entries: list[Entry], named: set[str], people: dict) -> None:
    """Gradescope names a submission's students in its metadata (``people``): one who uploaded only a PDF still
    gets a row, and so does one whose submission the metadata lists with no file in the export."""
    for e in entries:
        folder = submission_folder(e)
        if folder is None or e.name.endswith(".ipynb") or e.name == METADATA:
            continue
        submitters, when, written = people.get(folder, ([Person(folder)], None, ""))
        for who in submitters:
            if who.student in named:
                continue
            files = result.not_notebooks.get(who.student)
            result.not_notebooks[who.student] = f"{files}, {e.name}" if files else e.name
            result.without_notebook.setdefault(who.student, _submitter_job(who, e.rel, when, written))
    for folder, (submitters, when, written) in sorted(people.items()):
        for who in submitters:
            if who.student not in named and who.student not in result.without_notebook:
                result.not_notebooks[who.student] = NO_FILES
                result.without_notebook[who.student] = _submitter_job(who, folder, when, written)


def _submitter_job(who: Person, path: str, when: datetime.datetime | None, written: str) -> Job:
    """The row's Job of a Gradescope submitter who handed in no notebook (``path``: a file, or the folder)."""
    return Job(
        student=who.student,
        path=path,
        name=who.name,
        email=who.email,
        submitted=when.isoformat() if when else written,
        submitted_from="Gradescope created_at" if when or written else "",
    )


def _choose(result: Discovery, found: list[Candidate], notebook: str) -> None:
    """One job per student id: the candidate grader.batch.choice chooses (an unreadable one makes the student's
    row invalid); ``notebook``: the assignment's notebook name."""
    by_student: dict[str, list[Candidate]] = {}
    for c in found:
        by_student.setdefault(c.person.student, []).append(c)
    for student in sorted(by_student):
        choice = choose(by_student[student], notebook)
        best = choice.best
        for other, why in choice.ignored:
            result.skipped.append((other.entry.rel, duplicate_reason(student, best, other, why)))
        e, who = best.entry, best.person
        job = Job(
            student=student,
            path=str(e.path) if e.path else e.rel,
            late=best.late,
            name=who.name,
            email=who.email,
            problem=e.problem,
            submitted=best.submitted,
            submitted_from=best.submitted_from,
            chosen=choice.note,
        )
        if e.problem:
            result.unreadable.append(job)
            result.skipped.append((e.rel, e.problem))
        else:
            result.jobs.append(job)


def _notebook_name(assignment: str) -> str:
    """The notebook name ``assignment`` releases ("" for an assignment the registry does not know)."""
    from grader.assignments.registry import ASSIGNMENTS, get_outline

    return get_outline(assignment).notebook if assignment in ASSIGNMENTS else ""


def discover(submissions: str | Path, assignment: str, *, file_times: bool = False) -> Discovery:
    src = Path(submissions)
    if not src.exists():
        raise UsageError(f"no such file or folder: {src}")
    result = Discovery()
    if src.is_file() and src.suffix.lower() != ".zip":
        raise UsageError(f"{src} is a file but not a .zip export; pass a folder or a .zip")
    try:
        if src.is_file():
            result.workdir = tempfile.mkdtemp(prefix="seqgrade-zip-")
            entries = zip_entries(src, Path(result.workdir))
        else:
            entries = folder_entries(src)
        entries.sort(key=lambda e: (e.parts, e.order))
        metadata, problem = _metadata(entries)
        people = _gradescope_people(metadata)
        result.layout, found = _candidates(entries, assignment, people, file_times)
        candidates = {(c.entry.parts, c.entry.order) for c in found}
        for e in entries:
            if (e.parts, e.order) not in candidates and e.name != METADATA:
                result.skipped.append(
                    (
                        e.rel,
                        "not a notebook (.ipynb)" + (f"; {e.problem}" if e.problem else "")
                        if not e.name.endswith(".ipynb")
                        else e.problem or "not where this layout expects a submission",
                    )
                )
        _choose(result, found, _notebook_name(assignment))
        named = {job.student for job in result.jobs + result.unreadable}
        if result.layout == "canvas":
            _canvas_without_notebook(result, named)
        elif result.layout == "gradescope":
            _gradescope_without_notebook(result, entries, named, people)
            if problem:
                result.skipped.append(
                    (
                        _metadata_entry(entries).rel,
                        f"Gradescope's metadata could not be read ({problem}): each submission "
                        f"is named by its folder, without the students' ids, names and emails",
                    )
                )
    except BaseException:
        result.cleanup()
        raise
    if not result.jobs and not result.unreadable:
        result.cleanup()
        raise UsageError(f"no notebooks found in {src}")
    return result
