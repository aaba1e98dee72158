"""The corpus results as they were recorded, so that a change which must not move a grade (a speed-up, a new
protocol between grader and jail) is shown to have moved none: every ``results/<student>.json`` a corpus
batch writes is compared, byte for byte, with the digest recorded in ``recorded.json`` beside this file.

Three things in a result depend on where, when and with which version it was graded, not on the grading: the
cache key (a digest of the notebook, the grader's version and the limits, for reusing results), the paths of
the checkout and of the test's temporary folder, which a hostile notebook's messages may name, and the memory a
call held at its peak, which the grader measures from outside and reports in MiB (recursive_attention's
blockwise checks; the verdict depends on it only through a threshold far from honest and naive code). They are
replaced by fixed words before the digest is taken; nothing else is.

A few results also depend on the processor: graded on the AMD EPYC of 2026-12-02, 17 of recursive_attention's
results differ from those recorded on the Intel Xeon before (the same bytes run after run on each machine; the
reported numbers of the FlashAttention rule, computed from float32 attention by the processor's own vector code,
and the counterexamples hypothesis shrinks to near such bounds). Such an entry records one digest for each kind of
machine, and a result must equal one of them: a grade that moves with the machine is a defect to remove, and the
list shows where it is.

A change that moves grades on purpose records them again, and the commit says why:

    SEQGRADE_RECORD_RESULTS=1 .venv/bin/python -m pytest tests/test_corpus.py tests/test_courses.py -k recorded

A kind of machine whose results differ adds its digests beside those recorded (``SEQGRADE_RECORD_RESULTS=machine``).
Later on 2026-12-02 another AMD EPYC (its flags show AVX2 and no AVX-512; what the earlier one had was not noted)
moved six results: five of sequence_models printed least squares' rounding errors (1e-15, 1e-27), shown as 0 since;
one of recursive_attention (the FlashAttention rule's float32 numbers, as above) has a third digest.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

RECORD = Path(__file__).with_name("recorded.json")
# "1": record the results anew (a change that moves grades on purpose); "machine": keep every digest recorded and add
# this machine's where its result differs (a kind of machine whose results differ, each entry to be made independent).
RECORDING = os.environ.get("SEQGRADE_RECORD_RESULTS") in ("1", "machine")
ADDING = os.environ.get("SEQGRADE_RECORD_RESULTS") == "machine"
_CACHE_KEY = re.compile(rb'"cache_key": "[0-9a-f]*"')
_MEASURED_PEAK = re.compile(rb"held [0-9]+ MiB at its peak")


def normalized(raw: bytes, roots: tuple[Path, ...]) -> bytes:
    """``raw`` with its cache key, measured peaks and the given folders' paths replaced by fixed words (longest
    path first, so a folder inside another is replaced whole)."""
    text = _MEASURED_PEAK.sub(b"held <measured> MiB at its peak", _CACHE_KEY.sub(b'"cache_key": "<key>"', raw))
    for i, root in sorted(enumerate(roots), key=lambda p: -len(str(p[1]))):
        text = text.replace(str(root).encode(), f"<folder {i}>".encode())
    return text


def digests(results: Path, assignment: str, roots: tuple[Path, ...]) -> dict[str, str]:
    """{"<assignment>/<student>": sha256 of the normalized result} for every result in folder ``results``."""
    return {
        f"{assignment}/{p.stem}": hashlib.sha256(normalized(p.read_bytes(), roots)).hexdigest()
        for p in sorted(results.glob("*.json"))
    }


def _load() -> dict[str, list[str]]:
    """{entry: the digests recorded for it}: one, or one for each kind of machine where they differ."""
    stored = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {}
    return {k: [v] if isinstance(v, str) else list(v) for k, v in stored.items()}


def record(assignment: str, found: dict[str, str]) -> None:
    """Replace what is recorded for ``assignment`` with ``found`` (with ADDING: add each digest of ``found`` that
    differs to those recorded for its entry)."""
    stored = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {}
    kept = {k: v for k, v in stored.items() if not k.startswith(f"{assignment}/")}
    if ADDING:
        had = _load()
        found = {k: v if had.get(k, [v]) == [v] else had[k] + [v] * (v not in had[k]) for k, v in found.items()}
    RECORD.write_text(json.dumps({**kept, **found}, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def differences(assignment: str, found: dict[str, str], whole: bool) -> list[str]:
    """What differs from the record: results whose bytes changed, results never recorded, and (``whole``: the
    whole corpus was graded) recorded results that were not written this time."""
    recorded = {k: v for k, v in _load().items() if k.startswith(f"{assignment}/")}
    problems = [
        f"{k}: its result differs from the recorded one"
        for k in sorted(found)
        if k in recorded and found[k] not in recorded[k]
    ]
    problems += [f"{k}: no result recorded for it" for k in sorted(found.keys() - recorded.keys())]
    if whole:
        problems += [
            f"{k}: recorded, but no result was written this time" for k in sorted(recorded.keys() - found.keys())
        ]
    return problems
