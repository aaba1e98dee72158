"""The files of a batch's input, a folder or a zip archive, as :class:`Entry` records (grader.batch.inputs
decides whose submission each one is).

Archives: entry names are only read, never used as paths. A notebook (or Gradescope's metadata) is
unpacked to ``<workdir>/<entry number>/<its file name>``, shortened when over 255 bytes, so long names,
a file and a folder of one name, repeated names, ``..`` and absolute names cannot clash or escape; other
files are listed, not unpacked. Names without zip's UTF-8 flag are read as UTF-8 where they are valid,
else as cp437. An entry that cannot be unpacked (corrupt data, encrypted, a symbolic link, a notebook
over ``MAX_NOTEBOOK_BYTES``) is its student's problem (``Entry.problem``), and so is a symbolic link (or
anything but a plain file) in a folder: it is never read, as in an archive. The whole archive is refused
(``ArchiveError``) only when it is not a readable zip, holds more than ``MAX_ZIP_FILES`` entries, or its
notebooks add up to more than ``MAX_ZIP_BYTES`` unpacked.
"""

from __future__ import annotations

import datetime
import os
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from grader.errors import ArchiveError
from grader.notebook import MAX_NOTEBOOK_BYTES

MAX_ZIP_BYTES = (
    4 * 2**30
)  # the notebooks of one archive, unpacked (sizes from the zip's directory, which zipfile enforces)
MAX_ZIP_FILES = 20_000
METADATA = "submission_metadata.yml"  # Gradescope's list of submissions: unpacked beside the notebooks
NAME_BYTES = 255  # the longest file name Linux and macOS file systems take
FILE_LINK = "the file is a symbolic link, not a file: only a notebook handed in as a file is graded"
FOLDER_LINK = "a symbolic link to a folder, not followed"


@dataclass(frozen=True)
class Entry:
    """One file of the input."""

    parts: tuple[str, ...]  # its name in the input, split at "/"
    path: Path | None = None  # where its bytes are; None when not unpacked
    problem: str = ""  # why it could not be unpacked
    order: int = 0  # its place in an archive: of two entries with one name, the later counts
    time: str = ""  # its file time: a zip entry's (no zone), a file's modification time (UTC)

    @property
    def rel(self) -> str:
        return "/".join(self.parts)

    @property
    def name(self) -> str:
        return self.parts[-1]


def _readable(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (kept by Python as surrogates) shown as ``\\xNN``."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def folder_entries(root: Path) -> list[Entry]:
    """Every file under ``root`` (hidden files and folders left out). A symbolic link, to a file or a folder, and
    anything else that is not a plain file (a pipe, a device) is listed with its problem and never read: a
    notebook in an export is the student's own file, not a link to a classmate's or to a solution elsewhere."""
    entries = []
    for folder, dirs, files in os.walk(root):  # symbolic links to folders are not followed
        rel = Path(folder).relative_to(root).parts
        linked = [d for d in dirs if not d.startswith(".") and os.path.islink(os.path.join(folder, d))]
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in linked]
        entries += [Entry(tuple(_readable(p) for p in (*rel, d)), problem=FOLDER_LINK) for d in linked]
        entries += [_file_entry(Path(folder, f), tuple(_readable(p) for p in (*rel, f))) for f in files if f[0] != "."]
    return entries


def _file_entry(path: Path, parts: tuple[str, ...]) -> Entry:
    """A file of a folder input: its path and time, or (for a link or anything but a plain file) its problem."""
    try:
        st = path.lstat()
    except OSError as exc:
        return Entry(parts, problem=f"the file could not be read: {exc.strerror or exc}")
    time = datetime.datetime.fromtimestamp(st.st_mtime, datetime.timezone.utc).isoformat()
    if stat.S_ISLNK(st.st_mode):
        return Entry(parts, problem=FILE_LINK, time=time)
    if not stat.S_ISREG(st.st_mode):
        return Entry(parts, problem="the file is not a plain file (a pipe, a socket or a device)", time=time)
    return Entry(parts, path, time=time)


def _zip_time(info: zipfile.ZipInfo) -> str:
    try:
        return datetime.datetime(*info.date_time).isoformat()
    except ValueError:  # a zip may hold any six numbers
        return ""


def _archive_parts(info: zipfile.ZipInfo) -> tuple[str, ...]:
    name = info.filename
    if not info.flag_bits & 0x800:  # no UTF-8 flag: zipfile read cp437, but many tools write UTF-8 anyway
        try:
            name = name.encode("cp437").decode("utf-8")
        except UnicodeError:
            pass
    return tuple(p for p in name.replace("\\", "/").split("/") if p not in ("", ".", ".."))


def _file_name(name: str) -> str:
    """``name``, or when it is too long for a file name, as much of it as fits before its suffix."""
    raw = name.encode("utf-8")
    if len(raw) <= NAME_BYTES:
        return name
    suffix = PurePosixPath(name).suffix.encode("utf-8")[:16]
    return raw[: NAME_BYTES - len(suffix)].decode("utf-8", "ignore") + suffix.decode("utf-8", "ignore")


def _unpack(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path) -> str:
    """Unpack one entry to ``dest``; return why it could not be ("" when it was)."""
    if stat.S_ISLNK(info.external_attr >> 16):
        return "the archive entry is a symbolic link, not a file"
    if info.file_size > MAX_NOTEBOOK_BYTES:
        return (
            f"the archive entry is {info.file_size / 2**20:.0f} MB unpacked; notebooks over "
            f"{MAX_NOTEBOOK_BYTES // 2**20} MB are not graded"
        )
    try:
        dest.parent.mkdir(parents=True)
        with zf.open(info) as src, open(dest, "wb") as out:
            shutil.copyfileobj(src, out)
        return ""
    except Exception as exc:  # corrupt data, encryption, an unknown compression, a full disk: this entry's problem
        dest.unlink(missing_ok=True)
        return f"the archive entry could not be unpacked: {exc}"


def zip_entries(zip_path: Path, target: Path) -> list[Entry]:
    """Every file entry of the archive; the notebooks and the metadata unpacked under ``target``, each in a
    folder of its own (ArchiveError when the archive itself is refused)."""
    try:
        zf = zipfile.ZipFile(zip_path)
    except (
        zipfile.BadZipFile,
        EOFError,
        OSError,
        ValueError,
        NotImplementedError,
    ) as exc:  # the last: "zip file version"
        raise ArchiveError(f"{zip_path} is not a readable zip file ({exc})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ZIP_FILES:
            raise ArchiveError(
                f"{zip_path} holds {len(infos)} entries, over the {MAX_ZIP_FILES} seqgrade unpacks; "
                "unpack it yourself and pass the folder"
            )
        listed = []
        for order, info in enumerate(infos):
            parts = _archive_parts(info)
            if parts and not info.is_dir() and parts[0] != "__MACOSX" and not any(p.startswith(".") for p in parts):
                listed.append((order, info, parts))
        wanted = [
            (order, info, parts)
            for order, info, parts in listed
            if parts[-1].endswith(".ipynb") or parts[-1] == METADATA
        ]
        total = sum(info.file_size for _, info, _ in wanted if info.file_size <= MAX_NOTEBOOK_BYTES)
        if total > MAX_ZIP_BYTES:
            raise ArchiveError(
                f"the notebooks in {zip_path} add up to {total / 2**30:.1f} GiB unpacked, over the "
                f"{MAX_ZIP_BYTES // 2**30} GiB seqgrade unpacks; unpack it yourself and pass the folder"
            )
        entries = {order: Entry(parts, order=order, time=_zip_time(info)) for order, info, parts in listed}
        for order, info, parts in wanted:
            dest = target / f"{order:06d}" / _file_name(parts[-1])
            problem = _unpack(zf, info, dest)
            entries[order] = Entry(parts, None if problem else dest, problem, order, _zip_time(info))
    return list(entries.values())
