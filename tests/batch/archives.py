"""Zips and folders for the batch-input tests, and what ``discover`` finds in them."""

import warnings
import zipfile
from pathlib import Path

from grader.batch.inputs import discover


def _zip(path: Path, entries) -> Path:
    """A zip of (name or ZipInfo, bytes) in this order; repeated names are kept (zipfile warns about them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(path, "w") as zf:
            for name, data in entries:
                zf.writestr(name, data)
    return path


def _found(src, assignment="sequence_models"):
    found = discover(src, assignment)
    try:
        return (
            {job.student: Path(job.path).read_bytes() for job in found.jobs},
            dict(found.skipped),
            {job.student: job.problem for job in found.unreadable},
            found,
        )
    finally:
        found.cleanup()
