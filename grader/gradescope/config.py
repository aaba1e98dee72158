"""What the zip tells its own run_autograder: a small versioned JSON file, ``seqgrade.json``."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from grader.errors import SeqgradeError

CONFIG_NAME = "seqgrade.json"
CONFIG_FORMAT = "seqgrade-gradescope-autograder"
CONFIG_VERSION = 1
# Gradescope's visibility settings for a whole result (its spec's "visibility" field).
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")


class AutograderConfigError(SeqgradeError):
    """The zip's seqgrade.json is missing, from another format version, or malformed."""


@dataclass(frozen=True)
class AutograderConfig:
    assignment: str
    visibility: str = "visible"
    seqgrade_version: str = ""
    python: str = (
        ""  # major.minor of the Python the zip was built with (setup.sh fetches it for an image older than 3.10)
    )
    torch: str = ""  # the torch version setup.sh installs (CPU build)
    rate_limit: str = ""  # "N/PERIOD" (grader.gradescope.rate_limit), or "" for none

    def __post_init__(self):
        if self.visibility not in VISIBILITIES:
            raise ValueError(f"visibility must be one of {VISIBILITIES}; got {self.visibility!r}")

    def to_json(self) -> str:
        return json.dumps({"format": CONFIG_FORMAT, "version": CONFIG_VERSION, **asdict(self)}, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "AutograderConfig":
        try:
            data = json.loads(text)
            if data.get("format") != CONFIG_FORMAT or data.get("version") != CONFIG_VERSION:
                raise AutograderConfigError(
                    f"{CONFIG_NAME} is format {data.get('format')!r} version {data.get('version')!r}; this seqgrade "
                    f"reads {CONFIG_FORMAT!r} version {CONFIG_VERSION}: rebuild the zip with this seqgrade"
                )
            fields = {
                k: data[k]
                for k in ("assignment", "visibility", "seqgrade_version", "python", "torch", "rate_limit")
                if k in data
            }
            return cls(**fields)
        except (ValueError, TypeError, AttributeError) as exc:
            raise AutograderConfigError(f"{CONFIG_NAME} is malformed: {exc}") from None
