"""A terminal summary table of one notebook's result (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from grader.results import NotebookResult

from .html import total_line

STYLE = {
    "passed": "green",
    "failed": "red",
    "error": "red",
    "timeout": "yellow",
    "missing": "yellow",
    "manual": "cyan",
    "pending": "cyan",
    "staff": "cyan",
}


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with an ellipsis when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"


def print_summary(result: NotebookResult, console: Console | None = None, *, details: bool = True) -> None:
    console = console or Console()
    title = result.notebook
    if result.status != "graded":
        console.print(Text(f"{result.notebook}: {result.status}", style="bold red") + Text(f" — {result.reason}"))
    table = Table(title=Text(title), show_lines=False)
    table.add_column("exercise")
    table.add_column("score", justify="right")
    table.add_column("status")
    table.add_column("first problem", overflow="fold")
    for e in result.exercises:
        text = e.root_cause if details else ""
        status = "pending" if e.pending_points else "staff" if e.status == "manual" else e.status
        # Text, not markup: messages quote code such as seq[i : i + s], which rich would read as a style tag.
        table.add_row(
            Text(e.id + (" (bonus)" if e.bonus else "")),
            f"{e.score:g}/{e.max_score:g}",
            Text(status, style=STYLE.get(status, "")),
            Text(clip(text, 240)),
        )
    console.print(table)
    console.print(Text(f"{result.notebook}: {total_line(result)}"), soft_wrap=True)
