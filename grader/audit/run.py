"""``audit``: make the mutants of an assignment's solution, grade each (in parallel, through the batch's
dispatch: a worker that dies costs only the mutants it held), run the self-checks on each, and sum up per
exercise against the floors and the accepted mutants of the triage file."""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import multiprocessing
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import nbformat

from grader.assignments.registry import Assignment, get_assignment
from grader.course.release import release, source_dir
from grader.jail.limits import Limits
from grader.notebook import grade_id

from .model import AuditError, AuditReport, Floors, MutantOutcome, SelfCheckVerdict
from .mutants import Mutant, make_mutants, solution_cells
from .recording import distinctive
from .summary import summarise
from .triage import Triage, read_triage
from .worker import SOLUTION, job, run_job, selfcheck_calls

BACKENDS = ("sandbox", "inprocess")


@dataclass(frozen=True)
class AuditOptions:
    backend: str = "sandbox"  # how mutants are graded: "sandbox" (as students are) or "inprocess" (no limits)
    workers: int | None = None  # processes; None: one per core; 0: in this process (tests, in-memory assignments)
    sample: int | None = None  # at most this many mutants per exercise, the same ones every run
    only: tuple[str, ...] = ()  # just these mutant ids
    limits: Limits = field(default_factory=Limits)
    triage: Triage | None = None  # instead of the assignment's triage file
    leaks: bool = True  # also look for self-check inputs the grader checks too


def mutants_of(assignment: Assignment) -> tuple[Mutant, ...]:
    """Every mutant of the assignment's solution (no grading: fast)."""
    folder = source_dir(assignment.id)
    return make_mutants(assignment, folder / assignment.notebook)


def _sample(mutants: tuple[Mutant, ...], options: AuditOptions) -> tuple[Mutant, ...]:
    if options.only:
        unknown = sorted(set(options.only) - {m.id for m in mutants})
        if unknown:
            raise AuditError(f"no such mutant(s): {', '.join(unknown)}")
        return tuple(m for m in mutants if m.id in options.only)
    if options.sample is None:
        return mutants
    chosen = []
    for exercise in dict.fromkeys(m.exercise for m in mutants):
        mine = sorted(
            (m for m in mutants if m.exercise == exercise), key=lambda m: hashlib.sha256(m.id.encode()).hexdigest()
        )
        chosen += mine[: options.sample]
    return tuple(m for m in mutants if m in chosen)


def _write_notebooks(released: Path, mutants: tuple[Mutant, ...], out: Path) -> dict[str, Path]:
    nb = nbformat.read(released, as_version=4)
    index = {grade_id(c): i for i, c in enumerate(nb.cells)}
    paths = {}
    for mutant in mutants:
        cell = nb.cells[index[mutant.exercise]]
        original, cell.source = cell.source, mutant.source
        paths[mutant.id] = out / f"{mutant.id}.ipynb"
        paths[mutant.id].write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        cell.source = original
    return paths


def _check_release(assignment: Assignment, released: Path) -> None:
    """The audit mutates the source notebook's cells and grades them in the released solution: they must agree."""
    nb = nbformat.read(released, as_version=4)
    sources = {grade_id(c): c.source for c in nb.cells}
    for cell in solution_cells(assignment, source_dir(assignment.id) / assignment.notebook):
        if sources.get(cell.exercise) != cell.released:
            raise AuditError(
                f"the released solution's cell {cell.exercise} is not the source cell without its "
                f"solution markers; the audit cannot place its mutants"
            )


def _pool_setup() -> None:
    import torch

    torch.set_num_threads(1)  # one worker per core, as in a batch


def _dispatch(specs: list[dict], options: AuditOptions, assignment: Assignment, done: Callable[[dict], None]) -> dict:
    payloads = {}
    if options.workers == 0:
        for spec in specs:
            payloads[spec["mutant"]] = run_job(spec, assignment)
            done(payloads[spec["mutant"]])
        return payloads
    from grader.batch.dispatch import Workers, grade_all

    n = options.workers or os.cpu_count() or 1
    workers = Workers(
        make=lambda: cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"), initializer=_pool_setup)
    )
    try:
        for spec, payload in grade_all(specs, workers, run_job, lambda spec: (spec,), window=n + 1):
            payloads[spec["mutant"]] = {"mutant": spec["mutant"], **payload}
            done(payloads[spec["mutant"]])
    finally:
        workers.close()
    return payloads


def _outcome(mutant: Mutant, payload: dict, baseline: dict, triage: Triage) -> MutantOutcome:
    base = dict(
        id=mutant.id, exercise=mutant.exercise, operator=mutant.operator, before=mutant.before, after=mutant.after
    )
    if payload.get("error") or "scores" not in payload:
        return MutantOutcome(**base, error=payload.get("error") or "no result")
    lost = {e: round(baseline[e] - s, 6) for e, s in payload["scores"].items() if s < baseline.get(e, 0) - 1e-9}
    outcome = MutantOutcome(
        **base,
        lost=lost,
        failed_checks=tuple(payload["failed"]),
        passed_checks=tuple(payload["passed"]),
        selfcheck=SelfCheckVerdict(**payload["selfcheck"]),
        equivalent=payload["equivalent"],
    )
    accepted = triage.find(mutant.id) if outcome.survived else None
    return MutantOutcome(**{**outcome.__dict__, "accepted": accepted}) if accepted else outcome


def _baseline(payload: dict, assignment: Assignment) -> dict:
    if payload.get("error"):
        raise AuditError(f"the solution of {assignment.id} could not be graded: {payload['error']}")
    full = {e.id: e.points for e in assignment.exercises if e.kind != "manual"}
    short = [f"{e} ({s:g} of {full[e]:g})" for e, s in payload["scores"].items() if e in full and s < full[e] - 1e-9]
    if short:
        raise AuditError(
            f"the solution of {assignment.id} loses points in {', '.join(short)}: fix the solution or "
            f"the checks before auditing them"
        )
    verdict = payload["selfcheck"]
    if verdict["status"] != "ok":
        raise AuditError(
            f"a self-check fails on the solution of {assignment.id} ({verdict['cell']}: "
            f"{verdict['message']}): fix it before auditing"
        )
    return payload["scores"]


def _leaks(assignment: Assignment, solution: Path, folder: Path) -> tuple[str, ...]:
    """Self-check calls on the very arguments of a case the grader checks, whose result is not trivial: a
    self-check that printed it would give a graded case's expected value away."""
    from .worker import _answers

    functions = [e.id for e in assignment.exercises if e.kind == "function"]
    graded = {(name, digest) for e in functions for name, digest, _ in _answers(assignment, str(solution), e)}
    return tuple(
        sorted(
            {
                f"the self-checks call {shown}, which the grader checks too"
                for name, digest, shown, value in selfcheck_calls(solution, folder, functions)
                if (name, digest) in graded and distinctive(value)
            }
        )
    )


def audit(
    assignment: str | Assignment,
    options: AuditOptions = AuditOptions(),
    progress: Callable[[int, int], None] | None = None,
) -> AuditReport:
    """Audit ``assignment`` (an id, or an Assignment object with ``workers=0``); ``progress(done, total)``
    is called as each notebook finishes."""
    if options.backend not in BACKENDS:
        raise AuditError(f"unknown backend {options.backend!r}; one of {', '.join(BACKENDS)}")
    target = get_assignment(assignment) if isinstance(assignment, str) else assignment
    if options.backend == "sandbox":  # said once, before any mutant is made, rather than once per mutant
        from grader.sandbox.client import check_isolation

        check_isolation(options.limits.isolation)
    triage = options.triage or read_triage(target.id)
    started = time.monotonic()
    everything = mutants_of(target)
    mutants = _sample(everything, options)
    with tempfile.TemporaryDirectory(prefix="seqgrade-audit-") as tmp:
        folder = release(target.id, Path(tmp) / "release", solutions=True)
        solution = folder / target.notebook
        _check_release(target, solution)
        out = Path(tmp) / "mutants"
        out.mkdir()
        paths = _write_notebooks(solution, mutants, out)
        specs = [job(SOLUTION, "", solution, folder, target.id, options.backend, options.limits, solution)]
        specs += [
            job(m.id, m.exercise, paths[m.id], folder, target.id, options.backend, options.limits, solution)
            for m in mutants
        ]
        finished = []
        payloads = _dispatch(
            specs, options, target, lambda p: (finished.append(p), progress and progress(len(finished), len(specs)))
        )
        baseline = _baseline(payloads[SOLUTION], target)
        leaks = _leaks(target, solution, folder) if options.leaks else ()
    outcomes = tuple(_outcome(m, payloads[m.id], baseline, triage) for m in mutants)
    ids = {m.id for m in everything}
    stale = tuple(a for a in triage.accepted if a.mutant not in ids)
    return AuditReport(
        assignment=target.id,
        backend=options.backend,
        mutants=outcomes,
        exercises=summarise(target, outcomes, selfchecked(target)),
        floors=triage.floors if isinstance(triage.floors, Floors) else Floors(),
        seconds=time.monotonic() - started,
        sampled=len(mutants) < len(everything),
        stale=stale,
        leaks=leaks,
    )


def selfchecked(assignment: Assignment) -> set[str]:
    """The exercises some self-check cell of the source notebook passes to its checks."""
    import ast

    from .selfchecks import is_selfcheck

    ids = {e.id for e in assignment.exercises}
    nb = nbformat.read(source_dir(assignment.id) / assignment.notebook, as_version=4)
    return {
        node.id
        for cell in nb.cells
        if is_selfcheck(cell)
        for node in ast.walk(ast.parse(cell.source))
        if isinstance(node, ast.Name) and node.id in ids
    }
