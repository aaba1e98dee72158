"""File names for student ids. The id itself is kept exactly as the input gives it (Unicode, spaces, case)
everywhere it is shown or stored; only the names of files made for a student come from ``file_stem``.

``file_stem`` is injective:
* an id that is already a plain name (``SAFE_ID``: lowercase ASCII letters, digits and ``._@-``, starting
  with a letter or digit, not ending with ``.``, at most 64 characters, not a name Windows reserves) is
  its own stem, so results of ids like ``student01``, ``1001`` or ``ada@uni.edu`` keep their file names;
* any other id becomes a readable ASCII slug, ``~`` and the first 16 hex digits of the SHA-256 of the id's
  exact characters: ``jürgen`` -> ``jurgen~<digest>``, ``anna maria`` -> ``anna_maria~<digest>``.

No plain id contains ``~``, so the two forms never meet; two plain ids differ as themselves; two other
ids share a stem only if 64 bits of SHA-256 collide. Every stem is lowercase ASCII of at most 64
characters, so it names a file on any file system, case-insensitive ones included.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

SAFE_ID = re.compile(r"[a-z0-9](?:[a-z0-9._@-]{0,62}[a-z0-9_@-])?")
SLUG_CHARS = 40
DIGEST_HEX = 16
# Names Windows will not create whatever the extension (a results folder may be copied there).
RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def is_plain(student: str) -> bool:
    """Whether ``student`` is its own file stem."""
    return bool(SAFE_ID.fullmatch(student)) and student.split(".")[0] not in RESERVED


def file_stem(student: str) -> str:
    """The stem of every file named for ``student`` (``results/<stem>.json``, ``feedback/<stem>.html``,
    ``gradescope/<stem>/``); distinct ids always get distinct stems."""
    if is_plain(student):
        return student
    ascii_text = unicodedata.normalize("NFKD", student).encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9@-]+", "_", ascii_text).strip("_@-")[:SLUG_CHARS].rstrip("_@-")
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_HEX]
    return f"{slug or 'id'}~{digest}"
