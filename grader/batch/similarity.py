"""Which students handed in code that is too alike: copydetect's winnowing over every student's code cells.

Each student's code cells (test cells left out; ``OUTDIR/code/<student>.py``, written by the batch) are
tokenized by copydetect (``copydetect.utils.filter_code``, Pygments' Python lexer): every name becomes
one letter (``V`` variable or attribute, ``F`` function, ``O`` class), every string ``S``, and comments
and whitespace vanish, so renamed identifiers, comments and formatting change nothing. The filtered text
is cut into k-grams (``noise`` characters, about 15 tokens), hashed, and winnowed (copydetect's
``winnow``: every run of ``guarantee`` characters keeps at least one fingerprint), so reordered functions
still share every k-gram inside them. Fingerprints of the released notebook's code (signatures, stubs,
given helpers) are boilerplate and dropped, and so is any passage found in more than ``common`` of the
students (at least ``MIN_COMMON``), as MOSS does: code nearly everyone writes is no evidence.

copydetect hashes with Python's ``hash``, which changes from process to process; k-grams are hashed here
with BLAKE2b instead (48 bits, exact in the float buffer copydetect's winnowing keeps), so a report is
the same bytes every run. ``compare_files`` (copydetect) gives, for a pair, the share of each student's
fingerprinted code that lies in passages both have, and where those passages are.

A pair is flagged when the larger share is at least ``threshold`` and the passages they share add up to
at least ``min_shared`` filtered characters; clusters are the connected groups of flagged pairs. The
thresholds and the planted-copy recall and false pairs behind them are in docs/performance.md.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from grader.fsutil import write_atomic

from .identity import file_stem

SIMILARITY_VERSION = 1
CODE_DIR = "code"
REPORT_DIR = "similarity"
REPORT_FILE = "similarity.json"
MIN_COMMON = 10  # a passage counts as common code only when more students than this have it


@dataclass(frozen=True)
class Settings:
    threshold: float = 0.6  # the larger of the pair's two shares of shared code
    min_shared: int = 150  # filtered characters in shared passages (about 90 tokens)
    noise: int = 25  # k: the shortest passage that counts, in filtered characters
    guarantee: int = 30  # every shared passage this long is found
    common: float = 0.2  # a passage more than this share of the class has (and more than MIN_COMMON) is ignored

    def __post_init__(self):
        if not 0 < self.threshold <= 1 or self.min_shared < 0 or not 0 < self.common <= 1:
            raise ValueError(f"similarity settings out of range: {self}")
        if not 1 <= self.noise <= self.guarantee:
            raise ValueError(f"similarity needs 1 <= noise <= guarantee; got {self.noise}, {self.guarantee}")


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    share_a: float  # of a's fingerprinted code, the share found in b
    share_b: float
    shared: int  # filtered characters of a in passages both have

    @property
    def score(self) -> float:
        return max(self.share_a, self.share_b)


@dataclass(frozen=True)
class Report:
    settings: Settings
    students: int
    pairs: tuple[Pair, ...] = ()  # flagged, highest score first
    clusters: tuple[tuple[str, ...], ...] = ()  # largest first
    highest_unflagged: float = 0.0
    version: int = field(default=SIMILARITY_VERSION)

    def to_json(self) -> str:
        data = asdict(self)
        data["pairs"] = [{**asdict(p), "score": p.score} for p in self.pairs]
        return json.dumps(data, indent=2, allow_nan=False) + "\n"

    @classmethod
    def from_dict(cls, data: dict) -> "Report":
        if data.get("version") != SIMILARITY_VERSION:
            raise ValueError(f"unsupported similarity report version {data.get('version')!r}")
        return cls(Settings(**data["settings"]), data["students"],
                   tuple(Pair(p["a"], p["b"], p["share_a"], p["share_b"], p["shared"]) for p in data["pairs"]),
                   tuple(tuple(c) for c in data["clusters"]), data.get("highest_unflagged", 0.0))


def code_path(outdir: str | Path, student: str) -> Path:
    """Where the batch keeps ``student``'s code cells (``facts.student_code``) for this report."""
    return Path(outdir) / CODE_DIR / f"{file_stem(student)}.py"


class Fingerprint:
    """One document's winnowed fingerprints, with the attributes copydetect's ``compare_files`` reads."""

    def __init__(self, code: str, settings: Settings, boilerplate: frozenset = frozenset()):
        from copydetect.utils import filter_code, winnow

        self.raw_code = code
        self.k = settings.noise
        self.filtered_code, self.offsets = filter_code(code, "code.py", "python")
        hashes = kgram_hashes(self.filtered_code, self.k)
        selected, idx = winnow(hashes, settings.guarantee - settings.noise + 1, remove_duplicates=False) if len(hashes) else (hashes, hashes)
        self.hash_idx: dict[int, list[int]] = {}
        for h, i in zip(selected.tolist(), idx.tolist()):
            if h not in boilerplate:
                self.hash_idx.setdefault(h, []).append(i)
        self.hashes = set(self.hash_idx)

    def drop(self, common: set) -> None:
        """Forget the fingerprints in ``common``."""
        for h in common & self.hashes:
            del self.hash_idx[h]
        self.hashes -= common

    @property
    def token_coverage(self) -> float:
        from copydetect.utils import get_token_coverage

        return get_token_coverage(self.hash_idx, self.k, len(self.filtered_code))


def kgram_hashes(text: str, k: int) -> np.ndarray:
    """A stable 48-bit hash of every k-gram of ``text`` (copydetect's own uses Python's per-process ``hash``)."""
    return np.array([int.from_bytes(hashlib.blake2b(text[i:i + k].encode("utf-8", "surrogatepass"), digest_size=6).digest(), "big")
                     for i in range(len(text) - k + 1)], dtype=np.int64)


def boilerplate_hashes(release_code: str, settings: Settings) -> frozenset:
    """Every k-gram hash of the released notebook's code."""
    from copydetect.utils import filter_code

    return frozenset(kgram_hashes(filter_code(release_code, "release.py", "python")[0], settings.noise).tolist())


def compare(first: Fingerprint, second: Fingerprint):
    """copydetect's comparison of two fingerprints: (shared filtered characters of ``first``, (share of
    first, share of second), (slices of first, slices of second) in the original code)."""
    from copydetect.detector import compare_files

    if not first.hashes & second.hashes:
        return 0, (0.0, 0.0), (np.zeros((2, 0), int), np.zeros((2, 0), int))
    return compare_files(first, second)


def analyse(codes: dict[str, str], release_code: str, settings: Settings = Settings()) -> tuple[Report, dict]:
    """(the report over ``codes`` (student -> code), the fingerprints of each student)."""
    boilerplate = boilerplate_hashes(release_code, settings)
    prints = {s: Fingerprint(codes[s], settings, boilerplate) for s in sorted(codes)}
    holders: dict[int, list[str]] = {}
    for student, fp in prints.items():
        for h in fp.hashes:
            holders.setdefault(h, []).append(student)
    common = {h for h, who in holders.items() if len(who) > max(MIN_COMMON, settings.common * len(prints))}
    for fp in prints.values():
        fp.drop(common)
    candidates = set()
    for h, who in holders.items():
        if h not in common:
            candidates.update((a, b) for i, a in enumerate(who) for b in who[i + 1:])
    flagged, highest = [], 0.0
    for a, b in sorted(candidates):
        shared, (share_a, share_b), _ = compare(prints[a], prints[b])
        pair = Pair(a, b, round(float(share_a), 4), round(float(share_b), 4), int(shared))
        if pair.score >= settings.threshold and pair.shared >= settings.min_shared:
            flagged.append(pair)
        else:
            highest = max(highest, pair.score)
    flagged.sort(key=lambda p: (-p.score, p.a, p.b))
    return Report(settings, len(prints), tuple(flagged), _clusters(flagged), highest), prints


def _clusters(pairs: list[Pair]) -> tuple[tuple[str, ...], ...]:
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x
    for p in pairs:
        parent[root(p.a)] = root(p.b)
    groups: dict[str, list[str]] = {}
    for x in parent:
        groups.setdefault(root(x), []).append(x)
    return tuple(sorted((tuple(sorted(g)) for g in groups.values()), key=lambda g: (-len(g), g)))


def read_report(outdir: str | Path) -> Report | None:
    """The similarity report of the batch in ``outdir`` (None when there is none, or it cannot be read)."""
    try:
        return Report.from_dict(json.loads((Path(outdir) / REPORT_DIR / REPORT_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def release_code(assignment) -> str:
    """The code cells of the released notebook, as ``seqgrade release`` makes it."""
    from .facts import released_cells

    return "\n\n".join(sorted(released_cells(assignment.id, assignment.notebook)[1]))


def write_similarity(outdir: str | Path, assignment, students, settings: Settings | None = None) -> Report:
    """Compare the code of ``students`` kept in ``outdir`` and write ``similarity/`` there: the JSON report,
    the index page and one page per flagged pair. ``settings`` None: those of the last report, else the defaults."""
    from grader.report.similarity import index_page, pair_name, pair_page

    outdir = Path(outdir)
    if settings is None:
        previous = read_report(outdir)
        settings = previous.settings if previous is not None else Settings()
    codes = {}
    for student in students:
        try:
            codes[student] = code_path(outdir, student).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # no readable notebook, or graded before the batch kept code
    report, prints = analyse(codes, release_code(assignment), settings)
    folder = outdir / REPORT_DIR
    link = lambda p: pair_name(file_stem(p.a), file_stem(p.b))  # noqa: E731
    pages = set()
    for pair in report.pairs:
        _, _, slices = compare(prints[pair.a], prints[pair.b])
        write_atomic(folder / link(pair), pair_page(assignment.id, pair, codes, slices))
        pages.add(link(pair))
    for old in folder.glob("pairs/*.html"):  # pairs no longer flagged
        if f"pairs/{old.name}" not in pages:
            old.unlink()
    write_atomic(folder / "index.html", index_page(assignment.id, report, link))
    write_atomic(folder / REPORT_FILE, report.to_json())
    return report
