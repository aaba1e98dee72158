"""The similarity report and the summary page: copies found through renaming, reordering, comments and
layout, release code never counted, stable bytes, pages that only show escaped code; a summary whose item
analysis counts graded work only and names the commonest failure messages, with late and similarity sections.

The batch is the graded three-student course of manual_course (ada: the solution, bob: the release, cy: the
solution with another free-text answer, so the same code as ada)."""

import json
from dataclasses import replace

from grader.assignments.registry import SEQUENCE_MODELS
from grader.batch.facts import student_code
from grader.batch.similarity import Settings, analyse, kgram_hashes, read_report, release_code, release_sources
from grader.cli import main
from grader.report.summary import write_summary
from grader.results import CheckResult, ExerciseResult, LateCharge, NotebookResult
from tests.batch.manual_course import course, graded, out, threads  # noqa: F401 (fixtures)

SHORT = """
import torch

def causal_mask(n):  # the one line nearly everybody writes
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
"""


def _solution_code(released) -> str:
    return student_code(json.loads(released[1].read_text())["cells"])


def test_copies_are_found_through_renames_reordering_comments_and_layout(released):
    original = _solution_code(released)
    # a copy: names changed, functions in another order, comments and blank lines added, other spacing
    copy = original.replace("filter_size", "width").replace("seq", "series").replace("    ", "  ")
    copy = "\n# my own work\n".join(reversed(copy.split("\n\n")))
    report, _ = analyse(
        {"ada": original, "zed": copy, "bob": "", "release": release_code(SEQUENCE_MODELS)},
        release_code(SEQUENCE_MODELS),
    )
    assert [(p.a, p.b) for p in report.pairs] == [("ada", "zed")] and report.clusters == (("ada", "zed"),)
    assert report.pairs[0].score >= 0.75 and report.pairs[0].shared >= Settings().min_shared
    # the release handed back, and short code everybody writes alike, are no evidence
    small, _ = analyse({"x": SHORT, "y": SHORT}, release_code(SEQUENCE_MODELS))
    assert small.pairs == () and small.highest_unflagged == 0.0  # all of it shared, but no passage long enough


def test_a_ring_of_renamed_copies_and_a_padded_copy_are_found_in_a_class_and_independent_work_is_not():
    """The issue's class: one student and eleven renamed copies (a ring of 12), one student and a copy with a
    statement that changes nothing after every line, and 16 students who wrote their own code (tests/batch/
    similarity_class.py), 30 in all. Before: 0 of 66 ring pairs (passages held by more than max(10, 30/5)
    students were dropped as common) and the padded pair unlisted (0.51)."""
    from itertools import combinations

    from tests.batch.similarity_class import (
        LONG,
        MAX_SHARED_LONG,
        independent,
        notebook_code,
        padded,
        renamed,
        shared_cells,
    )

    students = independent(18)
    assert max(shared_cells(a, b, LONG) for a, b in combinations(students, 2)) <= MAX_SHARED_LONG
    ring = notebook_code(students[0])
    codes = {
        "ring00": ring,
        **{f"ring{i:02d}": renamed(ring, i) for i in range(1, 12)},
        "pad0": notebook_code(students[1]),
        "pad1": padded(notebook_code(students[1])),
        **{f"own{i:02d}": notebook_code(s) for i, s in enumerate(students[2:])},
    }
    assert len(codes) == 30 and codes["ring01"] != ring and "unused = 1" in codes["pad1"]
    report, _ = analyse(codes, release_sources(SEQUENCE_MODELS))
    assert report.clusters == (tuple(f"ring{i:02d}" for i in range(12)), ("pad0", "pad1"))
    assert len(report.pairs) == 66 + 1 and all(p.score >= Settings().threshold for p in report.pairs)
    assert not [p for p in report.pairs if p.a.startswith("own") or p.b.startswith("own")]  # no false pair
    padded_pair = next(p for p in report.pairs if p.a == "pad0")
    assert padded_pair.score > 0.95  # the padding is blanked out before fingerprinting


def test_fingerprints_are_the_same_in_every_process():
    """copydetect's own k-gram hash is Python's hash(), which differs between processes (PYTHONHASHSEED)."""
    import os
    import subprocess
    import sys

    text = "V=V.V(V,V=-1)\nreturn V(V)"
    here = kgram_hashes(text, 8).tolist()
    code = f"from grader.batch.similarity import kgram_hashes; print(kgram_hashes({text!r}, 8).tolist())"
    there = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    ).stdout
    assert there.strip() == str(here) and len(set(here)) == len(here)


def test_a_batch_writes_pairs_clusters_and_side_by_side_pages(out, capsys):
    report = read_report(out)
    assert report.students == 3 and [(p.a, p.b, p.score) for p in report.pairs] == [("ada", "cy", 1.0)]
    page = (out / "similarity" / "pairs" / "ada__cy.html").read_text()
    assert "<mark>" in page and "<script" not in page and "default-src 'none'" in page
    assert "&lt;" in page or "&gt;" in page or "&#" in page  # code shown escaped ("<=", "->" ...)
    summary = (out / "summary.html").read_text()
    assert "Similar submissions" in summary and 'href="similarity/pairs/ada__cy.html"' in summary
    before = (out / "similarity" / "similarity.json").read_bytes()
    assert main(["similarity", str(out)]) == 0 and (out / "similarity" / "similarity.json").read_bytes() == before
    assert "3 notebooks compared: 1 pair(s) in 1 cluster(s)" in capsys.readouterr().out
    assert main(["similarity", str(out), "--min-shared", "100000"]) == 0
    assert read_report(out).pairs == () and not (out / "similarity" / "pairs" / "ada__cy.html").exists()
    assert "no pair of the 3 notebooks looks alike" in (out / "summary.html").read_text()
    assert main(["similarity", str(out), "--threshold", "2"]) == 2


def _result(failures: dict, **kw) -> NotebookResult:
    """sequence_models with every check passed except ``failures``: check name -> message."""
    exercises = []
    for ex in SEQUENCE_MODELS.exercises:
        checks = tuple(
            CheckResult(
                c.name,
                "failed" if c.name in failures else "passed",
                0 if c.name in failures else c.points,
                c.points,
                failures.get(c.name, ""),
                kind="values" if c.name in failures else "",
            )
            for c in ex.checks
        ) or (CheckResult("manual_review", "manual", 0, ex.points),)
        exercises.append(ExerciseResult(ex.id, checks, ex.points, manual=not ex.checks))
    return NotebookResult(
        "sequence_models", "nb.ipynb", "graded", tuple(exercises), max_score=SEQUENCE_MODELS.max_score, **kw
    )


def test_the_summary_counts_graded_work_and_names_the_commonest_failures(tmp_path):
    windows = "check_seq2col_windows"
    off_by_one = (
        "for seq2col(seq, filter_size): y: 3 of 3 values differ; first at index (0,): expected 3, got 2\nHint: shifted"
    )
    results = {
        "a": _result({windows: off_by_one + "\nThe arguments: seq = [1, 2, 3, 4, 5]"}),
        "b": _result({windows: off_by_one + "\nThe arguments: seq = [9, 8, 7]"}),
        "c": _result(
            {windows: "seq2col(seq, filter_size) returned lists; expected numpy arrays"},
            late=LateCharge(0.8, "late by 1 day (submitted ...): 80% credit"),
        ),
        "d": _result({}),
        "release": replace(_result({windows: "not defined"}), flags=("release_identical",)),
        "broken": replace(_result({windows: "not defined"}), status="invalid", reason="the file is not valid JSON"),
    }
    write_summary(tmp_path, SEQUENCE_MODELS, results, [])
    page = (tmp_path / "summary.html").read_text()
    row = page[page.index(f'<code class="fn">{windows}</code>') :].split("</tr>")[0]
    assert "<td>1/4</td>" in row  # passed: d; of a, b, c, d (not the release, not the broken file)
    assert "2× for seq2col(seq, filter_size): y: 3 of 3 values differ; first at index (0,): expected 3, got 2" in row
    assert "1× seq2col(seq, filter_size) returned lists" in row and "not defined" not in row and "Hint" not in row
    assert "Item analysis (4 graded notebooks)" in page and "2 not counted" in page
    assert "Late work (1)" in page and "<td>80%</td>" in page and "late by 1 day" in page


def test_pages_are_made_for_the_highest_pairs_only_and_every_pair_is_listed(released, tmp_path, monkeypatch):
    """A class of copies flags every pair; side-by-side pages are made for the PAGE_LIMIT highest, the index
    links those and says so, and the JSON and the index still list every pair."""
    from grader.batch import outputs, similarity

    original = _solution_code(released)
    codes = {
        "ada": original,
        "bob": original.replace("filter_size", "width"),
        "cy": original.replace("seq", "series"),
        "dee": original.replace("    ", "  "),
    }
    for student, code in codes.items():
        path = similarity.code_path(tmp_path, student)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code)
    monkeypatch.setattr(similarity, "PAGE_LIMIT", 2)
    report = similarity.write_similarity(tmp_path, SEQUENCE_MODELS, sorted(codes))
    assert len(report.pairs) == 6
    pages = sorted(p.name for p in (tmp_path / "similarity" / "pairs").glob("*.html"))
    assert pages == sorted(f"{p.a}__{p.b}.html" for p in report.pairs[:2])
    index = (tmp_path / "similarity" / "index.html").read_text()
    assert index.count('href="pairs/') == 2 and "pages are made for the 2 highest pairs" in index
    assert all(f"{p.a} – {p.b}" in index for p in report.pairs)
    assert len(json.loads((tmp_path / "similarity" / "similarity.json").read_text())["pairs"]) == 6
    outputs.write_summary(tmp_path, SEQUENCE_MODELS, {}, [])  # the summary's ten highest pairs link those with a page
    summary = (tmp_path / "summary.html").read_text()
    assert summary.count('href="similarity/pairs/') == 2 and all(f"{p.a} – {p.b}" in summary for p in report.pairs)
    monkeypatch.setattr(similarity, "PAGE_LIMIT", 1)  # a page no longer among the highest is removed
    similarity.write_similarity(tmp_path, SEQUENCE_MODELS, sorted(codes))
    assert [p.name for p in (tmp_path / "similarity" / "pairs").glob("*.html")] == [
        f"{report.pairs[0].a}__{report.pairs[0].b}.html"
    ]
