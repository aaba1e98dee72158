"""An optional submission rate limit: at most N graded submissions per window.

Gradescope writes ``/autograder/submission_metadata.json`` with the submission's time (``created_at``)
and the student's ``previous_submissions``, each with its ``submission_time`` and the ``results`` the
autograder gave it (https://gradescope-autograders.readthedocs.io/en/latest/submission_metadata/). When
N submissions that were graded fall within the window before this one, it is not graded: its results
are those of the latest graded submission again (score, tests and all), with a message saying when the
next one will be graded. Only graded submissions count (``extra_data.seqgrade.graded``): an upload with no
notebook, a run where the autograder itself failed, and a submission answered this way (marked
``extra_data.seqgrade.rate_limited``) do not, so neither a wrong upload nor trying again early pushes the next
grade further away.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from grader.errors import UsageError

METADATA = "submission_metadata.json"
_PERIOD = re.compile(r"^(\d+)/(\d+(?:\.\d+)?)([mhd])$")
_UNIT_S = {"m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class RateLimit:
    count: int  # graded submissions allowed per window
    window_s: float

    @classmethod
    def parse(cls, text: str) -> "RateLimit":
        """``"3/24h"``: 3 graded submissions per 24 hours (``m``, ``h`` or ``d``)."""
        found = _PERIOD.match(text.strip())
        if not found or int(found.group(1)) < 1 or float(found.group(2)) <= 0:
            raise UsageError(
                f"a rate limit reads N/PERIOD with N >= 1 and a period in minutes, hours or days, "
                f"such as 3/24h, 1/30m or 5/1d; got {text!r}"
            )
        return cls(int(found.group(1)), float(found.group(2)) * _UNIT_S[found.group(3)])

    def describe(self) -> str:
        hours = self.window_s / 3600
        period = f"{hours:g} hour{'s' if hours != 1 else ''}" if hours >= 1 else f"{self.window_s / 60:g} minutes"
        return f"{self.count} graded submission{'s' if self.count != 1 else ''} per {period}"


def _when(text) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _graded(previous: dict) -> bool:
    """Whether the autograder graded ``previous``: what its results.json says. seqgrade writes ``graded`` into
    every results.json (false for a PDF or other upload with no notebook, a run where the autograder itself
    failed, and a submission answered by the limit); one written before it did says ``status`` only when a
    notebook was graded. A submission without results (Gradescope's own failure) was never graded."""
    results = previous.get("results")
    seqgrade = (results.get("extra_data") or {}).get("seqgrade") if isinstance(results, dict) else None
    if not isinstance(seqgrade, dict) or seqgrade.get("rate_limited"):
        return False
    return seqgrade["graded"] is True if "graded" in seqgrade else "status" in seqgrade


def limited_results(root: Path, limit: RateLimit, *, now: datetime | None = None) -> dict | None:
    """The results.json to give this submission instead of grading it, or None when it may be graded
    (the limit is not reached, or the metadata is missing or unreadable: then the student is graded)."""
    try:
        meta = json.loads((Path(root) / METADATA).read_text(encoding="utf-8"))
        previous = [p for p in meta.get("previous_submissions") or [] if isinstance(p, dict)]
    except (OSError, ValueError, AttributeError):
        return None
    now = _when(meta.get("created_at")) or now or datetime.now(timezone.utc)
    window = timedelta(seconds=limit.window_s)
    counted = sorted(
        (when, p)
        for p in previous
        if _graded(p) and (when := _when(p.get("submission_time"))) is not None and now - window < when <= now
    )
    if len(counted) < limit.count:
        return None
    last_time, last = max(
        ((w, p) for p in previous if _graded(p) and (w := _when(p.get("submission_time")))), key=lambda pair: pair[0]
    )
    free_at = counted[-limit.count][0] + window  # when the oldest of the last N leaves the window
    said = (
        f"This submission was not graded: this assignment allows {limit.describe()}, and you have had "
        f"{len(counted)} in the last {limit.describe().split(' per ')[1]}. A submission made after "
        f"{free_at.isoformat(timespec='minutes')} will be graded. Shown below is the result of your "
        f"submission of {last_time.isoformat(timespec='minutes')}."
    )
    results = copy.deepcopy(last.get("results")) if isinstance(last.get("results"), dict) else {}
    results.setdefault("score", last.get("score", 0))
    results["output"] = f"{said}\n\n{results.get('output', '')}".rstrip()
    results.setdefault("tests", [])
    results.setdefault("extra_data", {}).setdefault("seqgrade", {})["rate_limited"] = True
    return results
