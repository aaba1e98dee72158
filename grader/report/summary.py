"""The instructor's summary page of a batch: score histogram, item analysis, late work and similar submissions.

Item analysis counts graded work only: a notebook that could not be read, another assignment's, or the
release handed back unchanged says nothing about how the class did on an exercise. Per check it gives the
pass rate and the three most common failure messages (their first line: what went wrong, without the
counterexample's reproduction snippet), so the instructor sees which mistake the class made."""

from __future__ import annotations

from collections import Counter
from html import escape
from pathlib import Path

from grader.assignments.registry import Assignment
from grader.checking.kinds import FAILURE_KINDS
from grader.fsutil import write_atomic
from grader.results import NotebookResult

from .html import CSS

MESSAGES_SHOWN = 3
MESSAGE_CHARS = 200


def histogram_svg(totals: list[float], max_score: float, width: int = 480, height: int = 160) -> str:
    """The distribution of total scores as an inline SVG bar chart (no plotting library, no script)."""
    bins = min(20, max(5, int(max_score)))
    counts = [0] * bins
    for t in totals:
        counts[min(bins - 1, max(0, int(t / max_score * bins))) if max_score > 0 else 0] += 1
    top, left, bottom = max(counts) or 1, 36, 28
    bar = (width - left - 8) / bins
    plot = height - bottom - 8
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="histogram of total scores">'
    ]
    for i, c in enumerate(counts):
        h = plot * c / top
        parts.append(
            f'<rect x="{left + i * bar + 1:.1f}" y="{8 + plot - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
            f'fill="#3a7bd5"><title>{max_score * i / bins:g}-{max_score * (i + 1) / bins:g}: {c}</title></rect>'
        )
    parts.append(f'<line x1="{left}" y1="{8 + plot}" x2="{width - 8}" y2="{8 + plot}" stroke="#888"/>')
    for value, x in ((0, left), (max_score, width - 8)):
        parts.append(f'<text x="{x}" y="{height - 12}" font-size="11" text-anchor="middle">{value:g}</text>')
    parts.append(
        f'<text x="{(left + width) / 2:.0f}" y="{height - 2}" font-size="11" text-anchor="middle">total score</text>'
    )
    parts.append(f'<text x="4" y="16" font-size="11">{top}</text><text x="4" y="{8 + plot}" font-size="11">0</text>')
    return "".join(parts) + "</svg>"


def _kinds(counts: Counter) -> str:
    """Failure kinds as a list, commonest first, named as the feedback names them."""
    names = {**FAILURE_KINDS, "pending": "not graded by staff yet"}
    return "".join(
        f"<li>{count}× {escape(names.get(kind, kind or 'other'))}</li>" for kind, count in counts.most_common()
    )


def _bar(rate: float) -> str:
    """A pass-rate bar confined to its own cell (it never reaches into the text beside it)."""
    return f'<div class="bar" title="{rate:.0%} passed"><div style="width:{rate * 100:.1f}%"></div></div>'


def message_key(message: str) -> str:
    """What a failure message says, for counting alike ones: its first line, cut short."""
    line = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


def _messages(outcomes) -> str:
    """The most common failure messages of a check's outcomes, commonest first."""
    counts = Counter(
        message_key(c.message) or FAILURE_KINDS.get(c.kind, c.kind or c.status)
        for c in outcomes
        if c.status not in ("passed", "manual")
    )
    shown = "".join(f"<li>{count}× {escape(text)}</li>" for text, count in counts.most_common(MESSAGES_SHOWN))
    more = len(counts) - MESSAGES_SHOWN
    return f"<ul>{shown}</ul>" + (
        f'<div class="note">and {more} other message{"s" if more > 1 else ""}</div>' if more > 0 else ""
    )


def item_rows(assignment: Assignment, graded: list[NotebookResult]) -> list[str]:
    """One row per exercise (the kind of its first failure, by notebook) and one per check (pass rate and
    its most common failure messages)."""
    rows = []
    for ex in assignment.exercises:
        results = [e for r in graded for e in r.exercises if e.id == ex.id]
        first = Counter(next((c.kind for c in e.checks if c.status not in ("passed", "manual")), "") for e in results)
        first.pop("", None)
        pending = sum(c.pending for e in results for c in e.checks)
        if pending:
            first["pending"] = pending
        full = sum(e.score >= e.max_score for e in results)
        rows.append(
            f'<tr class="exercise"><td colspan="2"><b>{escape(ex.id)}</b> '
            f"({ex.points:g} point{'' if ex.points == 1 else 's'})</td>"
            f"<td>{full}/{len(results)}</td><td>{_bar(full / len(results) if results else 0.0)}</td>"
            f"<td><ul>{_kinds(first)}</ul></td></tr>"
        )
        for chk in ex.checks or ():
            outcomes = [c for e in results for c in e.checks if c.name == chk.name]
            passed = sum(c.status == "passed" for c in outcomes)
            rate = passed / len(outcomes) if outcomes else 0.0
            rows.append(
                f'<tr><td></td><td>{escape(chk.property)}<br><code class="fn">{escape(chk.name)}</code></td>'
                f"<td>{passed}/{len(outcomes)}</td><td>{_bar(rate)}</td><td>{_messages(outcomes)}</td></tr>"
            )
    return rows


SUMMARY_CSS = (
    ".bar{width:100%;max-width:100%;height:.8rem;background:#eee;border-radius:2px;overflow:hidden}"
    ".bar>div{height:100%;background:#3a7bd5} tr.exercise td{background:#fafafa}"
)


def late_section(results: dict[str, NotebookResult]) -> str:
    """Who was charged for lateness, and how much (or who the LMS marked late, without a policy)."""
    charged = {s: r for s, r in results.items() if r.late is not None}
    flagged = sorted(s for s, r in results.items() if "late" in r.flags)
    if not charged and not flagged:
        return ""
    rows = "".join(
        f"<tr><td>{escape(s)}</td><td>{r.late.credit:.0%}</td><td>{r.score:g} of {r.points:g}</td>"
        f"<td>{escape(r.late.reason)}</td></tr>"
        for s, r in sorted(charged.items())
    )
    table = (
        (
            "<table><colgroup><col style='width:14%'><col style='width:8%'><col style='width:12%'><col></colgroup>"
            f"<tr><th>student</th><th>credit</th><th>total</th><th>why</th></tr>{rows}</table>"
        )
        if rows
        else ""
    )
    lms = (
        f'<p class="note">Marked late by the LMS, no late policy applied: {escape(", ".join(flagged))}</p>'
        if flagged
        else ""
    )
    return f"<section><h2>Late work ({len(charged) + len(flagged)})</h2>{table}{lms}</section>"


def write_summary(
    outdir: Path, assignment: Assignment, results: dict[str, NotebookResult], skipped: list, similarity: str = ""
) -> None:
    """Instructor summary: score histogram, item analysis (pass rates and failure messages per exercise and
    check, over graded work), late work and ``similarity``, the similarity report's section (HTML)."""
    n = len(results)
    totals = [r.score for r in results.values()]
    # work that says how the class did: not unreadable notebooks, not the release handed back unchanged
    graded = [r for r in results.values() if r.status == "graded" and "release_identical" not in r.flags]
    excluded = n - len(graded)
    rows = item_rows(assignment, graded)
    statuses = Counter(r.status for r in results.values())
    mean = sum(totals) / n if n else 0.0
    skipped_html = "".join(f"<li>{escape(p)}: {escape(why)}</li>" for p, why in skipped)
    img = histogram_svg(totals, assignment.max_score) if n else ""
    html = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Summary: {escape(assignment.id)}</title>'
        f"<style>{CSS}{SUMMARY_CSS}</style></head><body><h1>{escape(assignment.id)}: {n} submissions</h1>"
        f'<div class="total">mean {mean:.2f} of {assignment.max_score:g}; '
        + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
        + "</div>"
        + (f"<section><h2>Score distribution</h2>{img}</section>" if img else "")
        + f"<section><h2>Item analysis ({len(graded)} graded notebooks)</h2>"
        + (
            f'<p class="note">{excluded} not counted: not readable, another assignment, or the release unchanged.</p>'
            if excluded
            else ""
        )
        + "<table><colgroup><col style='width:3%'>"
        "<col style='width:34%'><col style='width:8%'><col style='width:10%'><col></colgroup>"
        "<tr><th></th><th>exercise / check</th><th>passed</th><th>pass rate</th>"
        "<th>most common failure messages</th></tr>"
        + "".join(rows)
        + "</table></section>"
        + late_section(results)
        + similarity
        + (f'<section><h2>Files not graded</h2><ul class="note">{skipped_html}</ul></section>' if skipped else "")
        + "</body></html>\n"
    )
    write_atomic(outdir / "summary.html", html)
