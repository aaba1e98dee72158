"""What an audit finds, as frozen records with a versioned JSON form (``seqgrade audit --json``).

Per mutant: which exercises lost points (the one it changes: killed by the grader; any other: a double
charge), whether the notebook's self-checks fail on it, and for a survivor whether its outputs equal the
solution's on every input the checks drew (suspected equivalent) and whether an instructor accepted it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from grader.errors import SeqgradeError

AUDIT_SCHEMA_VERSION = 1


class AuditError(SeqgradeError):
    """The audit cannot be made or recorded: the solution loses points, a self-check fails on it, an
    unknown mutant is accepted, the triage file cannot be read."""


@dataclass(frozen=True)
class Floors:
    """What CI holds an assignment to (the triage file's ``floors``)."""

    unexplained_survivors: int = 0  # at most
    double_charges: int = 0  # at most
    selfcheck_kill_rate: float = 0.0  # at least: share of the grader's kills the self-checks also catch


@dataclass(frozen=True)
class Accepted:
    """A survivor an instructor reviewed: an equivalent mutant, or a difference judged not worth a check."""

    mutant: str
    reason: str
    diff: str = ""  # the change it was accepted for, as it read then
    by: str = ""


@dataclass(frozen=True)
class SelfCheckVerdict:
    status: str  # "ok", "failed" (a self-check cell failed), "error" (a cell raised), "timeout"
    cell: str = ""  # the grade_id of the first cell that did not pass
    message: str = ""  # its first line

    @property
    def caught(self) -> bool:
        return self.status != "ok"


@dataclass(frozen=True)
class MutantOutcome:
    id: str
    exercise: str
    operator: str
    before: str
    after: str
    lost: dict = field(default_factory=dict)  # exercise -> points lost against the solution (only those > 0)
    failed_checks: tuple[str, ...] = ()  # checks of its own exercise that did not pass
    passed_checks: tuple[str, ...] = ()  # checks of its own exercise that passed
    selfcheck: SelfCheckVerdict = SelfCheckVerdict("ok")
    equivalent: bool | None = None  # survivors only: outputs equal the solution's on every drawn input
    accepted: Accepted | None = None
    error: str = ""  # the audit could not run it (then nothing else is known)

    @property
    def diff(self) -> str:
        return f"{self.before}  ->  {self.after}"

    @property
    def killed(self) -> bool:
        return not self.error and self.lost.get(self.exercise, 0) > 0

    @property
    def survived(self) -> bool:
        return not self.error and not self.killed

    @property
    def double_charged(self) -> tuple[str, ...]:
        return tuple(sorted(e for e in self.lost if e != self.exercise))

    @property
    def unexplained(self) -> bool:
        return self.survived and self.accepted is None


@dataclass(frozen=True)
class ExerciseSummary:
    exercise: str
    kind: str  # "function", "class" or "answer"
    made: int
    killed: int  # by the grader
    selfcheck_killed: int  # by the self-checks, whatever the grader did
    both: int  # killed by the grader and by the self-checks
    survived: int
    equivalent: int  # survivors whose outputs equal the solution's
    accepted: int  # survivors accepted in the triage file
    double_charges: int
    errors: int
    has_selfcheck: bool

    @property
    def kill_rate(self) -> float | None:
        return self.killed / self.made if self.made else None

    @property
    def selfcheck_rate(self) -> float | None:
        """Of the mutants the grader kills, the share the self-checks catch too."""
        return self.both / self.killed if self.killed and self.has_selfcheck else None


@dataclass(frozen=True)
class AuditReport:
    assignment: str
    backend: str
    mutants: tuple[MutantOutcome, ...]
    exercises: tuple[ExerciseSummary, ...]
    floors: Floors
    seconds: float = 0.0
    sampled: bool = False  # only some mutants were audited (--sample or a list of ids)
    stale: tuple[Accepted, ...] = ()  # accepted mutants that no longer exist (their line changed)
    leaks: tuple[str, ...] = ()  # self-check calls the grader also makes (a worked example the checks use)

    @property
    def killed(self) -> int:
        return sum(m.killed for m in self.mutants)

    @property
    def selfcheck_rate(self) -> float | None:
        """Over the exercises that have self-checks: the share of the grader's kills they catch too."""
        killed = sum(e.killed for e in self.exercises if e.has_selfcheck)
        return sum(e.both for e in self.exercises if e.has_selfcheck) / killed if killed else None

    @property
    def unexplained(self) -> tuple[MutantOutcome, ...]:
        return tuple(m for m in self.mutants if m.unexplained)

    @property
    def double_charges(self) -> tuple[MutantOutcome, ...]:
        return tuple(m for m in self.mutants if m.double_charged)

    @property
    def below_floors(self) -> tuple[str, ...]:
        """Each floor this audit misses, in words; empty when it holds them all."""
        found = []
        if len(self.unexplained) > self.floors.unexplained_survivors:
            found.append(
                f"{len(self.unexplained)} unexplained survivor(s); the floor allows {self.floors.unexplained_survivors}"
            )
        if len(self.double_charges) > self.floors.double_charges:
            found.append(f"{len(self.double_charges)} double charge(s); the floor allows {self.floors.double_charges}")
        rate = self.selfcheck_rate
        if rate is not None and rate + 1e-9 < self.floors.selfcheck_kill_rate:
            found.append(
                f"the self-checks catch {rate:.0%} of the grader's kills; the floor is "
                f"{self.floors.selfcheck_kill_rate:.0%}"
            )
        if self.leaks:
            found.append(
                f"{len(self.leaks)} self-check call(s) use inputs the grader checks (their worked examples "
                f"give expected values away)"
            )
        errors = [m.id for m in self.mutants if m.error]
        if errors:
            found.append(f"{len(errors)} mutant(s) could not be audited: {', '.join(errors[:5])}")
        return tuple(found)

    def to_dict(self) -> dict:
        return {
            "version": AUDIT_SCHEMA_VERSION,
            "assignment": self.assignment,
            "backend": self.backend,
            "seconds": round(self.seconds, 1),
            "sampled": self.sampled,
            "floors": asdict(self.floors),
            "below_floors": list(self.below_floors),
            "selfcheck_kill_rate": self.selfcheck_rate,
            "exercises": [
                {**asdict(e), "kill_rate": e.kill_rate, "selfcheck_rate": e.selfcheck_rate} for e in self.exercises
            ],
            "mutants": [
                {**asdict(m), "diff": m.diff, "killed": m.killed, "double_charged": list(m.double_charged)}
                for m in self.mutants
            ],
            "stale": [asdict(a) for a in self.stale],
            "leaks": list(self.leaks),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"
