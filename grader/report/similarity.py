"""The similarity pages of a batch: an index of clusters and flagged pairs, and one side-by-side page per pair
with the passages the two students share highlighted (copydetect's ``highlight_overlap``, HTML-escaped).

Student code is shown as escaped text only; the pages run no script (their content security policy forbids
any) and load nothing from elsewhere.
"""

from __future__ import annotations

from html import escape

from .html import CSS

PAGE_HEAD = (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
)
SIDE_CSS = (
    ".sides{display:grid;grid-template-columns:1fr 1fr;gap:1rem} .sides pre{font-size:.78rem;overflow-x:auto}"
    " mark{background:#ffe08a}"
)


def pair_name(stem_a: str, stem_b: str) -> str:
    """The file of a pair's page, from the two students' file stems (injective: stems hold no '__')."""
    return f"pairs/{stem_a}__{stem_b}.html"


def thresholds_text(settings) -> str:
    return (
        f"a pair is listed when at least {settings.threshold:.0%} of one student's own code (the code the course "
        f"gave left out, and statements that change nothing) lies in passages the other has, "
        f"{settings.min_shared} or more tokenized characters in all; a cluster is students linked by listed pairs"
    )


def pair_page(assignment: str, pair, codes: dict, slices: tuple, highlight_overlap) -> str:
    """Two students' code side by side, the passages they share marked (``highlight_overlap``: copydetect's,
    grader.batch.copydetect_utils)."""
    columns = []
    for student, share, cut in ((pair.a, pair.share_a, slices[0]), (pair.b, pair.share_b, slices[1])):
        code = codes[student]
        marked = (
            highlight_overlap(code, cut, "<mark>", "</mark>", escape_html=True)[0] if cut.shape[1] else escape(code)
        )
        columns.append(f"<div><h2>{escape(student)}: {share:.0%} of the code shared</h2><pre>{marked}</pre></div>")
    title = escape(f"{assignment}: {pair.a} and {pair.b}")
    return (
        f"{PAGE_HEAD}<title>{title}</title><style>{CSS}{SIDE_CSS}</style></head><body><h1>{title}</h1>"
        f'<p class="note"><a href="../index.html">all pairs</a> · highlighted: passages both have, after names, '
        f"strings, comments and layout are set aside; code of the release is never counted.</p>"
        f'<div class="sides">{"".join(columns)}</div></body></html>\n'
    )


def pairs_table(report, link, limit: int | None = None) -> str:
    """A table of the flagged pairs, each linked by ``link(pair)`` (None: no link)."""
    rows = []
    for p in report.pairs[:limit]:
        name = escape(f"{p.a} – {p.b}")
        href = link(p)
        cell = f'<a href="{escape(href, quote=True)}">{name}</a>' if href else name
        rows.append(
            f"<tr><td>{cell}</td><td>{p.score:.0%}</td><td>{p.share_a:.0%} / {p.share_b:.0%}</td>"
            f"<td>{p.shared}</td></tr>"
        )
    return (
        (
            "<table><tr><th>pair</th><th>score</th><th>shares</th><th>shared characters</th></tr>"
            + "".join(rows)
            + "</table>"
        )
        if rows
        else ""
    )


def clusters_list(report) -> str:
    items = "".join(f"<li>{len(c)} students: {escape(', '.join(c))}</li>" for c in report.clusters)
    return f"<ul>{items}</ul>" if items else ""


def index_page(assignment: str, report, link, pages: int | None = None) -> str:
    """The list of clusters and flagged pairs; ``pages``: how many pairs have a side-by-side page (the highest
    ones; None: all)."""
    title = escape(f"{assignment}: similar submissions")
    summary = (
        f"{report.students} notebooks compared; {len(report.pairs)} pair(s) in {len(report.clusters)} "
        f"cluster(s); the highest pair not listed scores {report.highest_unflagged:.0%}"
    )
    if pages is not None and pages < len(report.pairs):
        summary += (
            f"; side-by-side pages are made for the {pages} highest pairs (similarity.json lists every "
            f"pair with its shares)"
        )
    return (
        f"{PAGE_HEAD}<title>{title}</title><style>{CSS}</style></head><body><h1>{title}</h1>"
        f'<div class="total">{escape(summary)}</div><p class="note">{escape(thresholds_text(report.settings))}. '
        "A pair is a place to look, not a verdict: read the two notebooks side by side.</p>"
        + (f"<section><h2>Clusters</h2>{clusters_list(report)}</section>" if report.clusters else "")
        + (f"<section><h2>Pairs</h2>{pairs_table(report, link)}</section>" if report.pairs else "")
        + "</body></html>\n"
    )


def summary_section(report, link) -> str:
    """The summary page's section: the clusters and the ten highest pairs, each linked to its page where it has
    one (``link(pair)``, relative to the report's folder, or None)."""
    if report is None:
        return ""
    head = (
        f"{len(report.pairs)} pair(s) of {report.students} notebooks look alike, in {len(report.clusters)} cluster(s)"
        if report.pairs
        else f"no pair of the {report.students} notebooks looks alike"
    )
    return (
        f'<section><h2>Similar submissions</h2><p>{escape(head)} (<a href="similarity/index.html">all pairs</a>; '
        f"{escape(thresholds_text(report.settings))}).</p>{clusters_list(report)}"
        f"{pairs_table(report, lambda p: f'similarity/{href}' if (href := link(p)) else None, limit=10)}</section>"
    )
