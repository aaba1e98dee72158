"""The reviewed triage file of an assignment, ``assignments/audit/<assignment>.json`` (versioned JSON, kept
in git beside the course and never released: it lists where the checks are weak): the floors CI holds the
audit to, and the surviving mutants an instructor accepted, each with the reason and the change it was
accepted for. ``seqgrade audit ASSIGNMENT --accept MUTANT --reason TEXT`` adds to it."""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from grader.course.release import ASSIGNMENTS_ROOT
from grader.fsutil import write_atomic

from .model import Accepted, AuditError, Floors

TRIAGE_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Triage:
    assignment: str
    floors: Floors = Floors()
    accepted: tuple[Accepted, ...] = ()

    def find(self, mutant: str) -> Accepted | None:
        return next((a for a in self.accepted if a.mutant == mutant), None)

    def to_json(self) -> str:
        data = {
            "version": TRIAGE_SCHEMA_VERSION,
            "assignment": self.assignment,
            "floors": asdict(self.floors),
            "accepted": [asdict(a) for a in sorted(self.accepted, key=lambda a: a.mutant)],
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def triage_path(assignment: str, root: Path | None = None) -> Path:
    return (root or ASSIGNMENTS_ROOT) / "audit" / f"{assignment}.json"


def read_triage(assignment: str, path: Path | None = None) -> Triage:
    """The assignment's triage file; defaults (floors of 0 survivors, 0 double charges) when it has none."""
    path = path or triage_path(assignment)
    if not path.exists():
        return Triage(assignment)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != TRIAGE_SCHEMA_VERSION:
            raise AuditError(
                f"{path}: triage file version {data.get('version')!r}; this seqgrade reads version "
                f"{TRIAGE_SCHEMA_VERSION}"
            )
        if data.get("assignment") != assignment:
            raise AuditError(f"{path} is the triage file of {data.get('assignment')!r}, not {assignment!r}")
        floors = Floors(**data.get("floors", {}))
        accepted = tuple(Accepted(**entry) for entry in data.get("accepted", []))
    except (OSError, ValueError, TypeError) as exc:
        raise AuditError(f"{path}: cannot read the triage file: {exc}") from None
    return Triage(assignment, floors, accepted)


def accept(triage: Triage, mutants, ids: list[str], reason: str, by: str = "") -> Triage:
    """The triage with each mutant of ``ids`` (one of ``mutants``, the assignment's current mutants)
    accepted for ``reason``; a mutant accepted before gets the new reason."""
    if not reason.strip():
        raise AuditError("--accept needs --reason TEXT: why the mutant is equivalent or not worth a check")
    known = {m.id: m for m in mutants}
    entries = {a.mutant: a for a in triage.accepted}
    for mutant in ids:
        if mutant not in known:
            near = difflib.get_close_matches(mutant, list(known), n=3)
            hint = f"; did you mean {', '.join(near)}?" if near else "; `seqgrade audit` lists the survivors' ids"
            raise AuditError(f"{triage.assignment} has no mutant {mutant!r}{hint}")
        entries[mutant] = Accepted(mutant, reason.strip(), known[mutant].diff, by)
    return replace(triage, accepted=tuple(entries.values()))


def write_triage(triage: Triage, path: Path | None = None) -> Path:
    path = path or triage_path(triage.assignment)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, triage.to_json())
    except OSError as exc:
        raise AuditError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
