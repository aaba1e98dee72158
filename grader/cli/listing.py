"""``seqgrade list``: the assignments, their exercises, checks and points, as tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .terminal import EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console


def cmd_list(args, console: Console) -> int:
    from rich.table import Table
    from rich.text import Text

    from grader.assignments.registry import ASSIGNMENTS

    for a in ASSIGNMENTS.values():
        bonus = f" + {a.bonus_points:g} bonus" if a.bonus_points else ""
        table = Table(title=f"{a.id} ({a.notebook}): {a.max_score:g} points{bonus}")
        table.add_column("exercise")
        table.add_column("points", justify="right")
        table.add_column("checks (property)")
        for e in a.exercises:
            checks = "\n".join(f"{c.points:g}  {c.property}" for c in e.checks) or "graded by course staff"
            table.add_row(
                Text(e.id + (" (bonus)" if e.bonus else "")), f"{e.points:g}", Text(checks)
            )  # Text: "E[x_t]" is not rich markup
        console.print(table)
    return EXIT_OK
