"""The shared libraries a set of ELF objects needs, found as the dynamic loader finds them: read from each object's
dynamic section (``DT_NEEDED``, ``DT_RUNPATH``/``DT_RPATH``), then looked up in its run path, the loader's cache
(``/etc/ld.so.cache``) and the default folders. :mod:`.root_plan` binds the system's libraries one by one from this,
instead of the whole folder that holds them.
"""

from __future__ import annotations

import os
import struct

CACHE = "/etc/ld.so.cache"
_CACHE_MAGIC = b"glibc-ld.so.cache1.1"
_DEFAULT_FOLDERS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib")
_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_RPATH, _DT_RUNPATH = 0, 1, 5, 15, 29


def dynamic_section(path: str) -> tuple[list[str], list[str]]:
    """The names an ELF shared object or executable needs (``DT_NEEDED``) and the folders it asks the loader to look
    in first (``DT_RUNPATH``, else ``DT_RPATH``, with ``$ORIGIN`` made its own folder); two empty lists for a file
    that is not ELF or has no dynamic section."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
                return [], []
            wide, end = head[4] == 2, "<" if head[5] == 1 else ">"
            phoff, phentsize, phnum = (
                struct.unpack_from(end + "Q", head, 32)[0] if wide else struct.unpack_from(end + "I", head, 28)[0],
                *struct.unpack_from(end + "HH", head, 54 if wide else 42),
            )
            f.seek(phoff)
            table = f.read(phentsize * phnum)
            loads, dynamic = [], None
            for i in range(phnum):
                entry = table[i * phentsize : (i + 1) * phentsize]
                if wide:
                    kind, _, offset, vaddr, _, filesz = struct.unpack_from(end + "IIQQQQ", entry)
                else:
                    kind, offset, vaddr, _, filesz = struct.unpack_from(end + "IIIII", entry)
                if kind == _PT_LOAD:
                    loads.append((vaddr, offset, filesz))
                elif kind == _PT_DYNAMIC:
                    dynamic = (offset, filesz)
            if dynamic is None:
                return [], []
            f.seek(dynamic[0])
            raw = f.read(dynamic[1])
            pair = struct.Struct(end + ("qQ" if wide else "iI"))
            tags: list[tuple[int, int]] = []
            for tag, value in pair.iter_unpack(raw[: len(raw) - len(raw) % pair.size]):
                if tag == _DT_NULL:
                    break
                tags.append((tag, value))
            strtab = next((v for t, v in tags if t == _DT_STRTAB), None)
            where = next((off + strtab - va for va, off, size in loads if va <= (strtab or -1) < va + size), None)
            if where is None:
                return [], []

            def text(offset: int) -> str:  # one string of the table (which holds every symbol's name: megabytes)
                f.seek(where + offset)
                chunk = f.read(4096)
                return chunk[: chunk.find(b"\0")].decode("utf-8", "replace")

            needed = [text(v) for t, v in tags if t == _DT_NEEDED]
            runpath = [text(v) for t, v in tags if t == _DT_RUNPATH] or [text(v) for t, v in tags if t == _DT_RPATH]
    except (OSError, struct.error):
        return [], []
    origin = os.path.dirname(os.path.realpath(path)) if any("ORIGIN" in r for r in runpath) else ""
    folders = [
        p.replace("${ORIGIN}", origin).replace("$ORIGIN", origin) for entry in runpath for p in entry.split(":") if p
    ]
    return needed, folders


def loader_cache(path: str = CACHE) -> dict[str, str]:
    """The loader's cache, a library's name to its path (the first entry of a name wins, as ld.so takes it); empty
    where there is no cache (musl) or its format is not glibc's 1.1."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return {}
    start = data.find(_CACHE_MAGIC)
    if start < 0 or len(data) < start + 48:
        return {}
    (count,) = struct.unpack_from("<I", data, start + 20)
    found: dict[str, str] = {}

    def text(offset: int) -> str:
        offset += start
        return data[offset : data.find(b"\0", offset)].decode("utf-8", "replace")

    for i in range(count):
        at = start + 48 + i * 24
        if at + 24 > len(data):
            break
        _, key, value = struct.unpack_from("<iII", data, at)
        found.setdefault(text(key), text(value))
    return found


def closure(objects: list[str], cache: dict[str, str] | None = None) -> list[str]:
    """Every library ``objects`` (real paths) need, directly or through another, by the path the loader would open
    (its links unresolved, so that the jail can make them: ``/lib/x86_64-linux-gnu/libz.so.1``), sorted; a name one
    of them already has (by file name) is that one, and a name found nowhere is left out (the loader would fail on
    it outside the jail too). ``objects`` themselves are not listed."""
    cache = loader_cache() if cache is None else cache
    have = {os.path.basename(o) for o in objects}
    seen = set(objects)  # real paths already (as /proc/PID/maps and a folder's listing under one give them)
    todo, found = sorted(seen), set()
    while todo:
        needed, folders = dynamic_section(todo.pop())
        for name in needed:
            if name in have:
                continue
            if "/" in name:
                candidates = [name]
            else:
                candidates = [os.path.join(d, name) for d in folders] + [cache.get(name, "")]
                candidates += [os.path.join(d, name) for d in _DEFAULT_FOLDERS]
            path = next((c for c in candidates if c and os.path.isfile(c)), None)
            if path is None:
                continue
            have.add(name)
            found.add(path)
            real = os.path.realpath(path)
            if real not in seen:
                seen.add(real)
                todo.append(real)
    return sorted(found)
