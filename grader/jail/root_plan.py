"""What the jail's root holds: derived once, in the zygote after its preload, from what its interpreter uses.

Nothing here is a list of places to hide. :func:`plan_root` reads from the interpreter itself: the standard
library and the installed packages (sysconfig's paths, the folders on ``sys.path`` it imported from, a virtual
environment as a whole), the executable, every file it has mapped (the shared libraries numpy and torch loaded:
in Python's folders with their folder, so that a later ``dlopen`` finds their neighbours; elsewhere one by one, with
what they and those neighbours need, :mod:`.libraries`), the dynamic loader's cache, five device
nodes and, of seqgrade itself, ``grader/__init__.py`` and the ``grader/jail`` package only. Where a folder it
needs also holds what Python does not use (the base interpreter's site-packages beside the standard library) or
seqgrade's own installed files (``grader/``, ``reference/``, the course, from the distribution's metadata), that
folder is bound entry by entry without them. :mod:`.filesystem` builds the root from the plan.
"""

from __future__ import annotations

import errno
import importlib.metadata
import os
import re
import sys
import sysconfig
from dataclasses import dataclass

from . import libraries
from .errors import SeqgradeError

DISTRIBUTION = "seqgrade"  # the name seqgrade is installed under: pyproject.toml's project.name (a test keeps them one)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
LOADER_CACHE = "/etc/ld.so.cache"  # where dlopen looks a library up by name
_SHARED_OBJECT = re.compile(r"\.so(\.[0-9.]+)?$")


class JailSetupError(SeqgradeError):
    """The jail's root cannot be built so that it shows Python without showing the course."""


@dataclass(frozen=True)
class Root:
    """What the jail's root holds: real paths bound read-only, and symbolic links made as on the host."""

    binds: tuple[str, ...]
    links: tuple[tuple[str, str], ...]
    refused: str = ""  # why no root can be built (raised by build_root: the rlimits level needs no root)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _under(path: str, folders: set[str]) -> str | None:
    """The deepest of ``folders`` that is ``path`` or holds it (None: none does)."""
    while True:
        if path in folders:
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _resolve(path: str, links: list[tuple[str, str]], depth: int = 0) -> str:
    """The real path of ``path``, appending to ``links`` each symbolic link met on the way (so that the
    jail can find the file by the same name: /lib -> usr/lib, a venv's python -> /usr/bin/python3)."""
    if depth > 40:
        raise OSError(errno.ELOOP, "too many symbolic links", path)
    done, parts = "/", [p for p in path.split("/") if p and p != "."]
    for i, part in enumerate(parts):
        if part == "..":
            done = os.path.dirname(done)
            continue
        here = os.path.join(done, part)
        if os.path.islink(here):
            target = os.readlink(here)
            links.append((here, target))
            return _resolve(os.path.join(done, target, *parts[i + 1 :]), links, depth + 1)
        done = here
    return done


def _venv_of(path: str, course: str) -> str | None:
    """The virtual environment (a folder with a pyvenv.cfg) inside ``course`` that holds ``path``, if any."""
    folder = path
    while _inside(folder, course) and folder != course:
        if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
            return folder
        folder = os.path.dirname(folder)
    return None


def _mapped_files(maps: str) -> list[str]:
    found = set()
    with open(maps) as f:
        for line in f:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].startswith("/") and not fields[5].endswith(" (deleted)"):
                found.add(fields[5].rstrip("\n"))
    return sorted(found)


def unused_package_folders() -> list[str]:
    """The package folders this Python knows (site's: the base interpreter's site-packages, the user's) that
    it does not import from: none of them is on sys.path, nor holds an entry of it (real paths)."""
    import site

    known = [*site.getsitepackages([sys.base_prefix, sys.base_exec_prefix])]
    if site.ENABLE_USER_SITE is not False:
        known.append(site.getusersitepackages())
    used = [os.path.realpath(p) for p in sys.path if p]
    return sorted(
        real
        for real in {os.path.realpath(k) for k in known if os.path.isdir(k)}
        if not any(_inside(u, real) for u in used)
    )


def installed_packages(name: str = DISTRIBUTION) -> list[str]:
    """The folders of seqgrade's installed distributions (every copy on sys.path), from the RECORD their installer
    wrote: the top-level folders it lists in a package folder (``grader``, ``reference``, the course's
    ``assignments``), real paths. A folder is left out whole, so that a file the RECORD does not list (bytecode
    compiled later, say) goes with it. Its metadata folder (``seqgrade-*.dist-info``: names, version, file list)
    and single files (the ``seqgrade`` script, an editable install's finder, which only name the checkout) hold
    none of the course. (A source tree's ``seqgrade.egg-info`` lists the checkout's files: no installation.)"""
    found = set()
    for dist in importlib.metadata.distributions(name=name):
        if dist.read_text("RECORD") is None:
            continue
        base = os.path.realpath(dist.locate_file(""))
        for file in dist.files or ():
            parts = os.path.normpath(str(file)).split(os.sep)
            if len(parts) > 1 and parts[0] not in ("..", "__pycache__") and not parts[0].endswith(".dist-info"):
                found.add(os.path.join(base, parts[0]))
    return sorted(found)


def _without(path: str, leave_out: list[str], links: list[tuple[str, str]]) -> list[str]:
    """``path`` as binds that leave out the paths ``leave_out``: itself where it holds none of them, else its
    entries (recursively where an entry holds one); a symbolic link among them is recorded in ``links``, made in
    the jail as on the host, never bound (which would show where it leads)."""
    if not os.path.isdir(path) or os.path.islink(path) or not any(_inside(f, path) for f in leave_out):
        return [path]
    if path in leave_out:
        return []
    found = []
    for entry in sorted(os.listdir(path)):
        inner = os.path.join(path, entry)
        if os.path.islink(inner):
            links.append((inner, os.readlink(inner)))
        elif inner not in leave_out:
            found += _without(inner, leave_out, links)
    return found


def plan_root(maps: str = "/proc/self/maps") -> Root:
    """What this interpreter needs in the jail, read from the interpreter itself (run in the zygote after
    its preload, so ``maps`` lists every library numpy and torch loaded).

    The interpreter's prefix is not bound whole: it may be /usr, which holds /usr/local/src and more. Its
    parts Python uses are: sysconfig's stdlib, platstdlib, purelib and platlib, a virtual environment as a
    whole, the folders on sys.path that Python has imported from (not every folder there: it holds the
    grader's own script folder or working folder, which may be a TA's home or /tmp), the executable, and
    the mapped files (a shared object in Python's folders brings its whole folder, where a later dlopen looks
    for its neighbours: torch/lib, lib-dynload; one elsewhere comes alone, with the libraries they all need).

    Of seqgrade only ``grader/__init__.py`` and ``grader/jail`` are bound. Installed (a wheel, ``pip install
    .``), its files are left out of the package folder by its metadata (:func:`installed_packages`). Run from a
    checkout (an editable install), nothing of the checkout is bound but a virtual environment inside it."""
    jail = os.path.dirname(os.path.realpath(__file__))
    package = os.path.dirname(jail)
    own = installed_packages()
    installed = any(_inside(package, f) for f in own)
    course = os.path.dirname(package)  # the checkout, where seqgrade is not installed into a package folder
    wanted = [sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")]
    # A module's __file__ is the sys.path entry it was found in, joined with its name: no need to resolve. Where
    # entries nest (the zygote runs with "/" first on sys.path), a module was found in the deepest that holds it.
    # (A relative __file__, as torch's _classes and _ops have, names no file.)
    files = (getattr(m, "__file__", None) for m in list(sys.modules.values()))
    loaded = {f for f in files if isinstance(f, str) and f.startswith("/")}
    entries = {os.path.abspath(p) for p in sys.path if p}
    used = {_under(f, entries) for f in loaded} - {None}
    venv = [sys.prefix] if sys.prefix != sys.base_prefix else []
    names = [*wanted, *used, *venv, sys.executable]
    needed = set(wanted)
    # A shared object in one of Python's own folders brings that folder (torch/lib, lib-dynload), where a later
    # dlopen finds its neighbours; one elsewhere (the system's library folder, libpython's) comes alone, with every
    # library it, they or those neighbours need, found as the loader would (grader.jail.libraries).
    python = {os.path.realpath(p) for p in names if p}
    mapped = _mapped_files(maps)
    objects = [p for p in mapped if _SHARED_OBJECT.search(p)]
    folders = {os.path.dirname(p) for p in objects if _under(p, python)}
    neighbours = [os.path.join(f, e) for f in folders for e in os.listdir(f) if _SHARED_OBJECT.search(e)]
    for path in [*mapped, *libraries.closure(sorted({*objects, *neighbours}))]:
        names.append(os.path.dirname(path) if os.path.dirname(path) in folders else path)
        needed.add(names[-1])
    names = list(dict.fromkeys(names))  # each once, in order
    links: list[tuple[str, str]] = []
    binds, refused = set(), ""
    for name in names:
        if not name or not os.path.exists(name):
            continue
        found: list[tuple[str, str]] = []
        real = _resolve(os.path.abspath(name), found)
        if not installed and (_inside(course, real) or (_inside(real, course) and _venv_of(real, course) is None)):
            if name in needed:
                refused = (
                    f"{real} holds both Python's packages and seqgrade's {package}, which no installed "
                    f"distribution of seqgrade lists: the jail could not show one without the other. Install "
                    f"seqgrade with pip (pip install ., a wheel, or pip install -e . from a checkout)"
                )
            continue  # the checkout itself (on sys.path for an editable install), or a folder around it
        binds.add(real if installed else _venv_of(real, course) or real)
        links += found
    binds.update([LOADER_CACHE, *DEVICES])
    # The loader's cache names libraries through the root's links (/lib/x86_64-linux-gnu/libssl.so.3 when
    # /lib -> usr/lib): keep each top-level link that leads to, or above, something bound.
    for entry in os.listdir("/"):
        top = "/" + entry
        if os.path.islink(top) and any(_inside(b, os.path.realpath(top)) for b in binds):
            links.append((top, os.readlink(top)))
    kept: set[str] = set()
    for path in sorted(binds):  # a folder before what it holds
        if os.path.exists(path) and _under(path, kept) is None:
            kept.add(path)
    # A folder bound whole for what Python uses in it may also hold a package folder Python does not use (the
    # base interpreter's site-packages beside its standard library, in the folder of libpython), or seqgrade's
    # installed files: that folder is bound entry by entry instead, without them.
    leave_out = [*unused_package_folders(), *own]
    kept = {entry for path in sorted(kept) for entry in _without(path, leave_out, links)}
    kept.update([os.path.join(package, "__init__.py"), jail])  # what runs in the jail, bound on its own
    made = sorted((p, t) for p, t in set(links) if _under(p, kept) is None)
    return Root(binds=tuple(sorted(kept)), links=tuple(made), refused=refused)
