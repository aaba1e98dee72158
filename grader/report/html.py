"""A self-contained HTML feedback page for one notebook: every check by the property it states, its
points, what went wrong and how to rerun the failing call; staff marks and pending manual points.

For causality checks the page draws which outputs moved when each input was perturbed, as an
inline SVG grid (no scripts, no external files), so it can be mailed or uploaded as is.
"""

from __future__ import annotations

from html import escape

from grader.results import FLAG_WORDS, SNIPPET_HEADING, UNANSWERED_KIND, CheckResult, NotebookResult

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:60rem;color:#222;padding:0 1rem}
h1{font-size:1.5rem;margin-bottom:.2rem} .total{font-size:1.2rem;color:#444}
section{border:1px solid #ddd;border-radius:6px;margin:1rem 0;padding:.6rem 1rem}
h2{font-size:1.1rem;margin:.2rem 0;display:flex;justify-content:space-between}
table{border-collapse:collapse;width:100%;table-layout:fixed} \
td,th{padding:.3rem .4rem;border-top:1px solid #eee;vertical-align:top;text-align:left;overflow-wrap:anywhere}
ul{margin:0;padding-left:1.1rem}
.passed{color:#176f2c}.failed,.error{color:#b3261e}.timeout,.missing,.unanswered{color:#8a5a00}.manual,.pending,.graded,.override{color:#1a5fb4}
.property{margin-bottom:.15rem} code.fn{font-size:.75rem;color:#666} .staff{color:#1a5fb4;margin:.1rem 0}
pre.snippet{background:#eef3fb;border-left:3px solid #3a7bd5}
pre{white-space:pre-wrap;margin:.2rem 0;font-size:.85rem;background:#f7f7f7;padding:.4rem;border-radius:4px}
.badge{font-weight:600;overflow-wrap:normal}.note{color:#555;font-size:.9rem}
.root{margin:.2rem 0 .5rem;font-weight:600;color:#b3261e;overflow-wrap:anywhere}
"""


def influence_svg(matrix: list[list[int]], cell: int = 22) -> str:
    """Rows are outputs (queries), columns the perturbed inputs; red marks a leak into the past."""
    T = len(matrix)
    size = cell * T
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + 60}" height="{size + 40}" role="img" '
        f'aria-label="which outputs changed when each input changed">'
    ]
    for i in range(T):
        for j in range(T):
            moved = bool(matrix[i][j])
            colour = ("#b3261e" if j > i else "#3a7bd5") if moved else "#f0f0f0"
            parts.append(
                f'<rect x="{40 + j * cell}" y="{20 + i * cell}" width="{cell - 2}" height="{cell - 2}" '
                f'fill="{colour}"/>'
            )
    parts.append('<text x="40" y="14" font-size="11">input position j →</text>')
    parts.append(
        f'<text x="0" y="{30 + size // 2}" font-size="11" transform="rotate(-90 10,{30 + size // 2})">output i →</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


def _points(x: float) -> str:
    return f"{x:g} point" + ("" if x == 1 else "s")


def total_line(result: NotebookResult) -> str:
    """The notebook's total in words: what the grader scored, what course staff scored, what waits for
    them, and a late charge."""
    bonus = result.bonus_points  # on top of the maximum
    regular = result.points - bonus
    marked = [c for e in result.exercises if not e.bonus for c in e.checks if c.staff is not None]
    if marked:
        staff = sum(c.staff.points for c in marked)
        text = (
            f"graded: {regular:g} of {result.gradable_points:g} points "
            f"({regular - staff:g} automatic, {staff:g} by staff)"
        )
    else:
        text = f"auto-graded: {regular:g} of {result.gradable_points:g} points"
    if bonus:
        text += f", and {_points(bonus)} from bonus exercises ({result.points:g} in all)"
    if result.pending_points:
        text += f"; {result.pending_points:g} points pending manual grading"
    if result.late is not None:
        text += f"; late: {result.late.credit * 100:g}% credit, {result.score:g} points count"
    return text


def _message(text: str) -> str:
    """A failure message, its reproduction snippet (if any) in a block of its own."""
    if not text:
        return ""
    body, _, code = text.partition(SNIPPET_HEADING)
    parts = f'<pre class="message">{escape(body.rstrip())}</pre>'
    if code.strip():
        parts += f'<div class="note">{escape(SNIPPET_HEADING)}</div><pre class="snippet">{escape(code.strip())}</pre>'
    return parts


MANUAL_SENTENCE = "A written answer, read and scored by course staff."


def _check_row(c: CheckResult) -> str:
    sentence = c.sentence
    if c.status == "manual" and not sentence:
        sentence = MANUAL_SENTENCE
    label = f'<div class="property">{escape(sentence)}</div>' if sentence else ""
    label += f'<code class="fn">{escape(c.name)}</code>'
    status, points, details = c.status, f"{c.points:g} of {c.max_points:g}", ""
    if c.kind == UNANSWERED_KIND and c.staff is None:
        status = UNANSWERED_KIND
        details = (
            '<div class="note">Unanswered: the answer cell is empty or still reads as it was released, so '
            "course staff had nothing to grade. Write your answer in that cell.</div>"
        )
    elif c.pending:
        status, points = "pending", f"— of {c.max_points:g}"
        details = '<div class="note">Waiting for course staff to grade this answer.</div>'
    elif c.staff is not None:
        points = f"{c.staff.points:g} of {c.max_points:g}"
        who = f" ({escape(c.staff.by)})" if c.staff.by else ""
        if c.staff.kind == "override":
            status = "override"
            details = (
                f'<div class="staff">Course staff set {_points(c.staff.points)}{who}; '
                f"the grader had given {c.staff.grader_points:g}.</div>"
            )
        else:
            status = "graded"
            details = (
                f'<div class="staff">Graded by course staff{who}: {c.staff.points:g} of {c.max_points:g} points.</div>'
            )
        if c.staff.reason:
            details += f'<div class="staff">Reason: {escape(c.staff.reason)}</div>'
    figure = ""
    if c.figure and c.figure.get("kind") == "influence":
        figure = (
            '<div class="note">Which outputs changed (coloured) when each input was changed; '
            "red squares above the diagonal would be outputs that saw the future.</div>"
            + influence_svg(c.figure["matrix"])
        )
    message = "" if c.status == "manual" or status == UNANSWERED_KIND else _message(c.message)
    return (
        f'<tr><td>{label}</td><td class="{escape(status)} badge">{escape(status)}</td>'
        f"<td>{points}</td><td>{details}{message}{figure}</td></tr>"
    )


def render(result: NotebookResult) -> str:
    rows = []
    for e in result.exercises:
        checks = "".join(_check_row(c) for c in e.checks)
        root = f'<p class="root">First problem: {escape(e.root_cause)}</p>' if e.root_cause else ""
        pending = f"; {e.pending_points:g} pending" if e.pending_points else ""
        worth = f"bonus: {_points(e.max_score)}, on top of the maximum" if e.bonus else _points(e.max_score)
        rows.append(
            f'<section id="{escape(e.id)}"><h2><span>{escape(e.id)} <span class="note">'
            f"({worth})</span></span>"
            f'<span class="{e.status}">{e.score:g} / {e.max_score:g}{pending}</span></h2>{root}'
            f'<table><colgroup><col style="width:34%"><col style="width:10%"><col style="width:9%"><col></colgroup>'
            f"<tr><th>what is checked</th><th>status</th><th>points</th><th>details</th></tr>{checks}</table></section>"
        )
    cell_notes = [c for c in result.cells if c.get("status") != "ok"]
    notes = ""
    if cell_notes:
        items = "".join(
            f"<li>cell {c['index']}: {escape(c['status'])} — {escape(c['message'])}</li>" for c in cell_notes
        )
        notes = f'<section><h2>Cells that did not run cleanly</h2><ul class="note">{items}</ul></section>'
    status = (
        ""
        if result.status == "graded"
        else f'<p class="error badge">{escape(result.status)}: {escape(result.reason)}</p>'
    )
    reason = f'<p class="note">{escape(result.reason)}</p>' if result.status == "graded" and result.reason else ""
    reason += f'<p class="note flag">Note: {escape(result.chosen)}.</p>' if result.chosen else ""
    reason += "".join(f'<p class="note flag">Note: {escape(FLAG_WORDS[f])}.</p>' for f in result.flags)
    reason += f'<p class="note flag">Late: {escape(result.late.reason)}.</p>' if result.late is not None else ""
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Feedback: {escape(result.notebook)}</title>'
        f"<style>{CSS}</style></head><body><h1>Feedback for {escape(result.notebook)}</h1>"
        f'<div class="total">Assignment {escape(result.assignment)}: {escape(total_line(result))}</div>'
        f"{status}{reason}{''.join(rows)}{notes}</body></html>\n"
    )
