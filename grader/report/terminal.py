"""A terminal summary table of one notebook's result (rich)."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..results import NotebookResult
from .html import total_line

STYLE = {"passed": "green", "failed": "red", "error": "red", "timeout": "yellow", "missing": "yellow", "manual": "cyan", "pending": "cyan"}


def print_summary(result: NotebookResult, console: Console | None = None, *, details: bool = True) -> None:
    console = console or Console()
    title = f"{result.notebook}: {total_line(result)}"
    if result.status != "graded":
        console.print(f"[bold red]{result.notebook}: {result.status}[/] — {result.reason}")
    table = Table(title=title, show_lines=False)
    table.add_column("exercise")
    table.add_column("score", justify="right")
    table.add_column("status")
    table.add_column("first problem", overflow="fold")
    for e in result.exercises:
        text = e.root_cause if details else ""
        status = "pending" if e.pending_points else e.status
        table.add_row(e.id, f"{e.score:g}/{e.max_score:g}", f"[{STYLE.get(status, '')}]{status}[/]", text[:240])
    console.print(table)
