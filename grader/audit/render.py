"""An audit report as text lines for the terminal and as a self-contained HTML page."""

from __future__ import annotations

import html

from .model import AuditReport, ExerciseSummary, MutantOutcome

SHOWN = 8  # missed mutants listed per exercise in the terminal (the page and --json list them all)


def _rate(part: int, whole: int) -> str:
    return f"{part} ({part / whole:.0%})" if whole else str(part)


def columns(e: ExerciseSummary) -> list[str]:
    caught = _rate(e.both, e.killed) if e.has_selfcheck else "none"
    return [
        e.exercise,
        str(e.made),
        _rate(e.killed, e.made),
        caught,
        str(e.survived),
        str(e.equivalent),
        str(e.accepted),
        str(e.double_charges),
        str(e.errors),
    ]


HEADERS = [
    "exercise",
    "mutants",
    "killed",
    "self-checks too",
    "survived",
    "equivalent?",
    "accepted",
    "double charges",
    "errors",
]


def table(report: AuditReport) -> list[str]:
    """The per-exercise table as aligned text lines."""
    rows = [HEADERS] + [columns(e) for e in report.exercises]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows]


def headline(report: AuditReport) -> str:
    rate = report.selfcheck_rate
    said = f"the self-checks catch {rate:.0%} of what the grader catches" if rate is not None else "no self-checks"
    sample = " (a sample)" if report.sampled else ""
    return (
        f"{report.assignment}: {len(report.mutants)} mutants{sample}, the grader kills {report.killed}; {said} "
        f"(floor {report.floors.selfcheck_kill_rate:.0%}); {len(report.unexplained)} unexplained survivor(s), "
        f"{len(report.double_charges)} double charge(s); {report.seconds:.0f} s ({report.backend})"
    )


def _survivor(m: MutantOutcome) -> str:
    tag = "suspected equivalent" if m.equivalent else "outputs differ"
    if m.accepted is not None:
        tag = f"{tag}; accepted: {m.accepted.reason}"
    return f"{m.id} [{tag}]  {m.diff}\n    passed: {', '.join(m.passed_checks) or 'no check'}"


def missed_by_selfchecks(report: AuditReport) -> list[MutantOutcome]:
    """Mutants the grader charges while every self-check prints [ok]."""
    checked = {e.exercise for e in report.exercises if e.has_selfcheck}
    return [m for m in report.mutants if m.killed and not m.selfcheck.caught and m.exercise in checked]


def false_alarms(report: AuditReport) -> list[MutantOutcome]:
    """Mutants a self-check fails while the grader gives them full marks."""
    return [m for m in report.mutants if m.survived and m.selfcheck.caught]


def sections(report: AuditReport) -> list[tuple[str, list[str]]]:
    """(title, lines) of everything beyond the table, for the terminal (long lists cut per exercise)."""
    found = []
    survivors = [m for m in report.mutants if m.survived]
    if survivors:
        found.append(
            (
                "Survivors (accept an equivalent one with: seqgrade audit "
                f"{report.assignment} --accept ID --reason TEXT)",
                [_survivor(m) for m in survivors],
            )
        )
    charged = report.double_charges
    if charged:
        found.append(
            (
                "Double charges (a mutant of one exercise loses points in another)",
                [
                    f"{m.id}  {m.diff}\n    loses "
                    + ", ".join(f"{p:g} in {e}" for e, p in sorted(m.lost.items()) if e != m.exercise)
                    for m in charged
                ],
            )
        )
    missed = missed_by_selfchecks(report)
    if missed:
        lines, per = [], {}
        for m in missed:
            per[m.exercise] = per.get(m.exercise, 0) + 1
            if per[m.exercise] <= SHOWN:
                lines.append(
                    f"{m.id}  {m.diff}\n    the grader charges {m.lost[m.exercise]:g} ({', '.join(m.failed_checks)})"
                )
            elif per[m.exercise] == SHOWN + 1:
                lines.append(f"... more in {m.exercise} (--json or --html lists them all)")
        found.append(("Missed by the self-checks (they print [ok], the grader charges)", lines))
    alarms = false_alarms(report)
    if alarms:
        found.append(
            (
                "Self-checks that fail while the grader gives full marks",
                [f"{m.id}  {m.diff}\n    {m.selfcheck.cell}: {m.selfcheck.message}" for m in alarms],
            )
        )
    errors = [m for m in report.mutants if m.error]
    if errors:
        found.append(("Mutants the audit could not run", [f"{m.id}  {m.diff}\n    {m.error}" for m in errors]))
    if report.stale:
        found.append(
            (
                "Accepted mutants that no longer exist (their line changed: review and remove them)",
                [f"{a.mutant}  {a.diff}" for a in report.stale],
            )
        )
    if report.leaks:
        found.append(
            ("Self-check inputs the grader checks too (their worked examples give answers away)", list(report.leaks))
        )
    if report.below_floors:
        found.append(("Below the floors of the triage file", list(report.below_floors)))
    return found


def _row(cells: list[str], tag: str = "td") -> str:
    return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"


_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}pre{white-space:pre-wrap;margin:.2em 0}"
    "h2{margin-top:1.5em}.bad{color:#a00}"
)


def to_html(report: AuditReport) -> str:
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>audit of {html.escape(report.assignment)}"
        f"</title><style>{_STYLE}</style></head><body>",
        f"<h1>Audit of {html.escape(report.assignment)}</h1><p>{html.escape(headline(report))}</p>",
        "<table>" + _row(HEADERS, "th") + "".join(_row(columns(e)) for e in report.exercises) + "</table>",
    ]
    full = [
        (
            "Every mutant the self-checks miss",
            [
                f"{m.id}  {m.diff}\n    the grader charges {m.lost[m.exercise]:g} ({', '.join(m.failed_checks)})"
                for m in missed_by_selfchecks(report)
            ],
        )
    ]
    for title, lines in [s for s in sections(report) if not s[0].startswith("Missed")] + full:
        if lines:
            bad = " class='bad'" if title.startswith("Below") else ""
            parts.append(
                f"<h2{bad}>{html.escape(title)}</h2>" + "".join(f"<pre>{html.escape(line)}</pre>" for line in lines)
            )
    parts.append("</body></html>\n")
    return "".join(parts)
