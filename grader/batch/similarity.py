"""Which students handed in code that is too alike: copydetect's winnowing over every student's code cells.

Each student's code cells (test cells left out; ``OUTDIR/code/<student>.py``, written by the batch) first
have their dead statements blanked out (``grader.batch.deadcode``: a statement whose result nothing uses,
such as ``_ = 0`` or ``None`` padded after every line, changes no fingerprint), then are tokenized by
copydetect (``copydetect.utils.filter_code``, Pygments' Python lexer): every name becomes one letter
(``V`` variable or attribute, ``F`` function, ``O`` class), every string ``S``, and comments and whitespace
vanish, so renamed identifiers, comments and formatting change nothing. The filtered text is cut into
k-grams (``noise`` characters, about 15 tokens), hashed, and winnowed (copydetect's ``winnow``: every run
of ``guarantee`` characters keeps at least one fingerprint), so reordered functions still share every
k-gram inside them. Common code is only what the course gave every student: fingerprints of the released
notebook (its code cells, the code blocks of its text) and of the files released with it (the self-check
helper) are dropped. Code many students share is not dropped for being common: a ring of copies is many
students sharing one text, and the larger it is the more it must show.

copydetect hashes with Python's ``hash``, which changes from process to process; k-grams are hashed here
with BLAKE2b instead (48 bits, exact in the float buffer copydetect's winnowing keeps), so a report is
the same bytes every run. ``compare_files`` (copydetect) gives, for a pair, the share of each student's
fingerprinted code that lies in passages both have, and where those passages are.

Only shared passages of at least ``min_run`` filtered characters count: a one-line function, a loop header
or a call two students write alike is no evidence, where code shared by copying runs on for whole
functions. A pair is flagged when the larger share is at least ``threshold`` and the passages they share add
up to at least ``min_shared`` filtered characters; clusters are the connected groups of flagged pairs (a
ring of copies is one cluster). The thresholds and the planted-copy recall and false pairs behind them are in
docs/performance.md.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from grader.fsutil import write_atomic

from .copydetect_utils import copydetect_utils
from .deadcode import blank_dead
from .identity import file_stem

if TYPE_CHECKING:
    import numpy as np

SIMILARITY_VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1 also dropped code common to a share of the class, and counted every passage
CODE_DIR = "code"
REPORT_DIR = "similarity"
REPORT_FILE = "similarity.json"
# Side-by-side pages are made for this many pairs, the highest scores first (every flagged pair is listed in the
# index and the JSON): a class of variants of one solution flags thousands of pairs (12,791 of 300 notebooks),
# whose pages nobody reads one by one and which took a third of the report's time; the clusters say who is linked.
PAGE_LIMIT = 200
FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)  # a code block of a markdown cell


@dataclass(frozen=True)
class Settings:
    threshold: float = 0.7  # the larger of the pair's two shares of shared code
    min_shared: int = 150  # filtered characters in shared passages (about 90 tokens)
    noise: int = 25  # k: the shortest passage that is fingerprinted, in filtered characters
    guarantee: int = 30  # every shared passage this long is found
    min_run: int = 60  # the shortest shared passage that counts as evidence (about 35 tokens: more than a one-liner)

    def __post_init__(self):
        if not 0 < self.threshold <= 1 or self.min_shared < 0:
            raise ValueError(f"similarity settings out of range: {self}")
        if not 1 <= self.noise <= self.guarantee or self.min_run < 0:
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
        if data.get("version") not in READABLE_VERSIONS:
            raise ValueError(f"unsupported similarity report version {data.get('version')!r}")
        # a version 1 report's thresholds were set for another measure (common code dropped, every passage
        # counted): the next comparison starts from today's defaults
        settings = Settings(**data["settings"]) if data["version"] == SIMILARITY_VERSION else Settings()
        return cls(
            settings,
            data["students"],
            tuple(Pair(p["a"], p["b"], p["share_a"], p["share_b"], p["shared"]) for p in data["pairs"]),
            tuple(tuple(c) for c in data["clusters"]),
            data.get("highest_unflagged", 0.0),
        )


def code_path(outdir: str | Path, student: str) -> Path:
    """Where the batch keeps ``student``'s code cells (``facts.student_code``) for this report."""
    return Path(outdir) / CODE_DIR / f"{file_stem(student)}.py"


class Fingerprint:
    """One document's winnowed fingerprints: ``hash_idx`` (hash -> positions in the filtered text), ``offsets``
    (copydetect's map from filtered positions back to the code) and ``coverage`` (filtered characters under
    some fingerprint)."""

    def __init__(self, code: str, settings: Settings, boilerplate: frozenset = frozenset()):
        utils = copydetect_utils()
        filter_code, get_token_coverage, winnow = utils.filter_code, utils.get_token_coverage, utils.winnow

        self.raw_code = code
        self.k = settings.noise
        self.filtered_code, self.offsets = filter_code(blank_dead(code), "code.py", "python")  # same positions
        hashes = kgram_hashes(self.filtered_code, self.k)
        selected, idx = (
            winnow(hashes, settings.guarantee - settings.noise + 1, remove_duplicates=False)
            if len(hashes)
            else (hashes, hashes)
        )
        self.hash_idx: dict[int, list[int]] = {}
        for h, i in zip(selected.tolist(), idx.tolist()):
            if h not in boilerplate:
                self.hash_idx.setdefault(h, []).append(i)
        self.hashes = set(self.hash_idx)
        self.coverage = float(get_token_coverage(self.hash_idx, self.k, len(self.filtered_code)))

    def in_code(self, cut: np.ndarray) -> np.ndarray:
        """Slices of the filtered text (2 x N: starts, ends) as slices of the code: each position moved by the
        characters filtering removed before it."""
        import numpy as np

        if len(self.offsets) == 0:
            return cut
        moved = np.clip(np.searchsorted(self.offsets[:, 0], cut), 0, len(self.offsets) - 1)
        return cut + self.offsets[:, 1][moved]


def kgram_hashes(text: str, k: int) -> np.ndarray:
    """A stable 48-bit hash of every k-gram of ``text`` (copydetect's own uses Python's per-process ``hash``)."""
    import numpy as np  # here: a batch of one notebook compares nothing, and its process never imports numpy

    return np.array(
        [
            int.from_bytes(
                hashlib.blake2b(text[i : i + k].encode("utf-8", "surrogatepass"), digest_size=6).digest(), "big"
            )
            for i in range(len(text) - k + 1)
        ],
        dtype=np.int64,
    )


def boilerplate_hashes(release: str | Sequence[str], settings: Settings) -> frozenset:
    """Every k-gram hash of the code the course gave (the released notebook's code, its text's code blocks,
    the files released with it), as written and with its dead statements blanked out (a stub's docstring)."""
    filter_code = copydetect_utils().filter_code
    pieces = [release] if isinstance(release, str) else list(release)
    return frozenset(
        h
        for piece in pieces
        for text in {piece, blank_dead(piece)}
        for h in kgram_hashes(filter_code(text, "release.py", "python")[0], settings.noise).tolist()
    )


def compare(first: Fingerprint, second: Fingerprint, min_run: int = 0):
    """Two fingerprints compared as copydetect's ``compare_files`` does, counting only shared passages of at
    least ``min_run`` filtered characters: (shared filtered characters of ``first``, (share of first, share
    of second), (slices of first, slices of second) in the code)."""
    import numpy as np

    get_copied_slices = copydetect_utils().get_copied_slices
    empty = np.zeros((2, 0), int)
    both = first.hashes & second.hashes
    if not both:
        return 0, (0.0, 0.0), (empty, empty)
    sizes, shares, slices = [], [], []
    for fp in (first, second):  # the positions of the fingerprints both have (copydetect's find_fingerprint_overlap)
        positions = np.array([i for h in both for i in fp.hash_idx[h]], dtype=np.int64)
        cut = get_copied_slices(positions, fp.k).astype(int).reshape(2, -1)
        cut = cut[:, cut[1] - cut[0] >= min_run]
        sizes.append(int((cut[1] - cut[0]).sum()))
        shares.append(sizes[-1] / fp.coverage if fp.coverage else 0.0)
        slices.append(fp.in_code(cut) if cut.shape[1] else empty)
    return sizes[0], (shares[0], shares[1]), (slices[0], slices[1])


def analyse(
    codes: dict[str, str], release: str | Sequence[str], settings: Settings = Settings()
) -> tuple[Report, dict]:
    """(the report over ``codes`` (student -> code), the fingerprints of each student); ``release``: the code
    the course gave (``release_sources``), whose passages never count."""
    report, prints, _ = _analyse(codes, release, settings)
    return report, prints


def _analyse(codes: dict[str, str], release, settings: Settings) -> tuple[Report, dict, dict]:
    """``analyse``, and the slices of each flagged pair (for its page)."""
    boilerplate = boilerplate_hashes(release, settings)
    prints = {s: Fingerprint(codes[s], settings, boilerplate) for s in sorted(codes)}
    flagged, highest, slices = [], 0.0, {}
    for a, b in itertools.combinations(prints, 2):
        if prints[a].hashes.isdisjoint(prints[b].hashes):
            continue
        shared, (share_a, share_b), cut = compare(prints[a], prints[b], settings.min_run)
        pair = Pair(a, b, round(float(share_a), 4), round(float(share_b), 4), int(shared))
        if pair.score >= settings.threshold and pair.shared >= settings.min_shared:
            flagged.append(pair)
            slices[pair] = cut
        else:
            highest = max(highest, pair.score)
    flagged.sort(key=lambda p: (-p.score, p.a, p.b))
    return Report(settings, len(prints), tuple(flagged), _clusters(flagged), highest), prints, slices


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


def release_sources(assignment) -> tuple[str, ...]:
    """The code the course gives every student: the released notebook's code cells (as ``seqgrade release``
    makes it), the code blocks of its markdown text, and the Python files released beside it."""
    from grader.course import ASSIGNMENTS_ROOT  # not .release: nbgrader may be being imported in the background

    from .facts import released, released_cells

    cells = sorted(released_cells(assignment.id, assignment.notebook)[1])
    text = "\n".join(c.source for c in released(assignment.id, assignment.notebook) if c.cell_type == "markdown")
    blocks = [m.group(1) for m in FENCED.finditer(text)]
    files = [p.read_text(encoding="utf-8") for p in sorted((ASSIGNMENTS_ROOT / "source" / assignment.id).glob("*.py"))]
    return tuple(cells + blocks + files)


def release_code(assignment) -> str:
    """The code cells of the released notebook, as ``seqgrade release`` makes it."""
    from .facts import released_cells

    return "\n\n".join(sorted(released_cells(assignment.id, assignment.notebook)[1]))


def similarity_imports() -> None:
    """Import what comparing code needs (numpy, copydetect, the Python lexer Pygments loads on first use), so
    that a thread can import it before the report is made beside other work (grader.batch.nbgrader_import)."""
    copydetect_utils().filter_code("x = 1\n", "warm.py", "python")


def pair_link(report: Report):
    """``link(pair)``: where the side-by-side page of a pair of ``report`` is, relative to the report's folder;
    None for a pair that has no page (it is not among the PAGE_LIMIT highest)."""
    from grader.report.similarity import pair_name

    paged = set(report.pairs[:PAGE_LIMIT])
    return lambda p: pair_name(file_stem(p.a), file_stem(p.b)) if p in paged else None


def write_similarity(outdir: str | Path, assignment, students, settings: Settings | None = None) -> Report:
    """Compare the code of ``students`` kept in ``outdir`` and write ``similarity/`` there: the JSON report,
    the index page and a page for each flagged pair, up to PAGE_LIMIT of them. ``settings`` None: those of the
    last report, else the defaults."""
    from grader.report.similarity import index_page, pair_page

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
    if len(codes) < 2:  # no pair to compare: the release is not read, nothing is fingerprinted
        report, slices = Report(settings, len(codes), (), (), 0.0), {}
    else:
        report, _, slices = _analyse(codes, release_sources(assignment), settings)
    folder = outdir / REPORT_DIR
    link = pair_link(report)
    pages = set()
    for pair in report.pairs[:PAGE_LIMIT]:
        write_atomic(
            folder / link(pair),
            pair_page(assignment.id, pair, codes, slices[pair], copydetect_utils().highlight_overlap),
        )
        pages.add(link(pair))
    for old in folder.glob("pairs/*.html"):  # pairs no longer flagged, or no longer among the highest
        if f"pairs/{old.name}" not in pages:
            old.unlink()
    write_atomic(folder / "index.html", index_page(assignment.id, report, link, len(pages)))
    write_atomic(folder / REPORT_FILE, report.to_json())
    return report
