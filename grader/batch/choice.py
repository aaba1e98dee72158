"""Which of a student's notebooks a batch grades when its input holds several, and what the student's row says.

The rule, the first that tells two notebooks apart:
1. the latest submission (Gradescope's ``:created_at``; one submission elsewhere);
2. a notebook that can be read (a symbolic link, a corrupt or oversized archive entry cannot);
3. the assignment's notebook name (``Assignment.notebook``; on Canvas also as Canvas renames a file handed in
   again, ``<stem>-<n>.ipynb``);
4. the newest: a file's modification time, an archive entry's date;
5. on Canvas, the higher file number Canvas gives (a later upload);
6. the path that sorts last, then the later of two archive entries of one name.

The others are not graded: each is listed as skipped, with why, and the graded notebook's row, its progress line
and its feedback page name the graded one and the ones left out (``Choice.note``), so a scratch copy that was
graded instead of the solved notebook never passes for a silent 0.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Protocol

from .entries import Entry


class Candidate(Protocol):
    """A notebook found for a student (grader.batch.inputs.Candidate), as the rule reads it."""

    entry: Entry
    rank: tuple  # of the submission it comes from (Gradescope's time; () elsewhere)
    shown: str  # its name as the student gave it
    canvas_number: tuple  # (the number Canvas gives the file,) on Canvas, else ()


SAME_NAME = "a later archive entry of the same name"


@dataclass(frozen=True)
class Choice:
    best: Candidate
    ignored: tuple[tuple[Candidate, str], ...]  # (a notebook not graded, why: what the graded one has over it)
    note: str  # for the student's row and page, "" when there was one notebook


def newness(time: str) -> float:
    """A file time (ISO 8601, with an offset or without one, as in a zip) as a number; -inf when unknown."""
    try:
        when = datetime.datetime.fromisoformat(time)
    except ValueError:
        return float("-inf")
    return (when if when.tzinfo is not None else when.replace(tzinfo=datetime.timezone.utc)).timestamp()


def is_named(shown: str, notebook: str, *, canvas: bool) -> bool:
    """Whether a notebook handed in as ``shown`` bears the assignment's notebook name ``notebook``."""
    if not notebook:
        return False
    if shown == notebook:
        return True
    stem, suffix = PurePosixPath(notebook).stem, PurePosixPath(notebook).suffix
    return canvas and re.fullmatch(re.escape(stem) + r"-\d+" + re.escape(suffix), shown) is not None


def _key(c: Candidate, notebook: str) -> tuple:
    e = c.entry
    return (
        c.rank,
        not e.problem,
        is_named(c.shown, notebook, canvas=bool(c.canvas_number)),
        newness(e.time),
        c.canvas_number,
        e.parts,
    )


def _why(best: Candidate, other: Candidate, notebook: str) -> str:
    """Why ``other`` was not graded, ``best`` was: the first step of the rule that tells them apart."""
    a, b = _key(best, notebook), _key(other, notebook)
    if a[0] != b[0]:
        return "it is from an earlier submission"
    if a[1] != b[1]:
        return other.entry.problem
    if a[2] != b[2]:
        return f"it is not named {notebook}"
    if a[3] != b[3]:
        return "it is older"
    if a[4] != b[4]:
        return "Canvas's number says it was handed in earlier"
    if a[5] != b[5]:
        return "nothing else tells them apart and its path sorts first"
    return ""  # two archive entries of one name


def choose(candidates: list[Candidate], notebook: str) -> Choice:
    """The notebook of one student's ``candidates`` (at least one) to grade, by the module's rule; ``notebook``: the
    assignment's notebook name ("" when not known)."""
    ranked = sorted(candidates, key=lambda c: (_key(c, notebook), c.entry.order))
    best, others = ranked[-1], ranked[-2::-1]
    ignored = tuple((c, _why(best, c, notebook)) for c in others)
    if not ignored:
        return Choice(best, (), "")
    names = [c.shown for c in ranked]
    unique = len(set(names)) == len(names)

    def name(c: Candidate) -> str:
        return c.shown if unique else c.entry.rel

    left = ", ".join(f"{name(c)} ({why or 'an earlier archive entry of the same name'})" for c, why in ignored)
    rule = f"one named {notebook}, else the newest" if notebook else "the newest"
    latest = "of the latest submission " if best.rank else ""
    note = (
        f"{len(ranked)} notebooks were handed in: graded {name(best)}; not graded: {left}. Of several notebooks "
        f"seqgrade grades {latest}one that can be read, {rule}"
    )
    return Choice(best, ignored, note)


def duplicate_reason(student: str, best: Candidate, other: Candidate, why: str) -> str:
    """The skipped line of ``other``, a notebook ``choose`` left out for ``best`` (``why``: ``Choice.ignored``'s)."""
    if best.entry.rel != other.entry.rel:
        instead = best.entry.rel
    else:
        instead = "another archive entry of the same name" if why else SAME_NAME
    return f"duplicate for student {student}; graded {instead} instead" + (f": {why}" if why else "")
