"""Every CSV seqgrade writes goes through ``csv_text``: one policy against spreadsheet formulas.

A cell a spreadsheet would read as a formula (OWASP's CSV injection list: text starting with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return) gets a leading ``'``, so ``=HYPERLINK("http://x","y")``
in a student's name, id, answer or a TA's comment shows as text when the file is opened. The policy is
by type, not by looking: a number seqgrade computed (``int`` or ``float``, written as ``f"{x:g}"``)
is never quoted, so a total stays a number; every ``str`` cell is text from somewhere else and is
neutralised, even one that happens to read ``-1.5``. ``unquoted`` undoes it for what comes back
(a TA's score file saved from the export), so a round trip gives back the same text, except for text
that itself starts with ``'`` and a formula character, whose quote reads as ours.
"""

from __future__ import annotations

import csv
import io
from typing import Iterable, Sequence

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
Cell = str | int | float


def neutralised(text: str) -> str:
    """``text`` as a cell no spreadsheet runs: a leading ``'`` where it starts like a formula."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def unquoted(text: str) -> str:
    """The text a neutralised cell stood for (a cell as a TA's spreadsheet saved it back)."""
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_STARTS) else text


def cell(value: Cell) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise TypeError(f"a CSV cell is text or a number; got {type(value).__name__} {value!r}")
    return neutralised(value) if isinstance(value, str) else f"{value:g}"


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    """The CSV document (``\\n`` line ends, minimal quoting) of ``header`` and ``rows``, every cell under
    the policy above."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([cell(h) for h in header])
    writer.writerows([cell(v) for v in row] for row in rows)
    return buf.getvalue()
