"""Grade a batch: discover, skip what is already graded, grade the rest in parallel, write outputs.

Each finished submission is written at once (atomically), so a batch killed at any moment loses only
the submissions in flight; running it again grades those and skips the rest (results are keyed by a
hash of the notebook, the assignment, the grader version and the limits).
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from grader.assignments.registry import get_outline
from grader.errors import OutputNotWritable, UsageError
from grader.fsutil import ensure_writable_dir, write_atomic
from grader.jail.limits import Limits
from grader.results import NotebookResult

from . import nbgrader_import, outputs
from .dispatch import EXHAUSTED, Workers, grade_all
from .facts import read_facts
from .inputs import Discovery, discover
from .late import batch_policy
from .pool import SharedZygote, default_workers, local_workers
from .publish import publish
from .record import (
    LMS_FORMATS,
    BatchRecord,
    StudentRecord,
    check_outdir_assignment,
    check_storable_db_url,
    gradebook_url,
    missing_result,
    no_notebook_reason,
    write_record,
)
from .similarity import code_path, similarity_imports, write_similarity
from .staff import load_marks
from .totals import final_result
from .worker import cache_key, grade_job


@dataclass(frozen=True)
class BatchConfig:
    submissions: str
    assignment: str
    outdir: str
    workers: int = 0  # 0: one per core
    scheduler: str | None = None
    db_url: str | None = None
    gradescope: bool = False
    limits: Limits = Limits()
    backend: str = "sandbox"
    lms: str = ""  # "canvas" or "gradescope": also write OUTDIR/<lms>-grades.csv for that gradebook's import
    late_policy: str | None = None  # a late policy's JSON file (None: the course config's policy, if any)
    extensions: str | None = None  # a CSV of extensions (student, due, reason), instead of the policy's own
    file_times: bool = False  # a folder's file times are the submission times


@dataclass
class BatchReport:
    total: int = 0
    graded: int = 0
    reused: int = 0
    failed: int = 0
    skipped: list = field(default_factory=list)
    layout: str = ""
    results: dict = field(default_factory=dict)
    seconds: float = 0.0
    notes: list = field(default_factory=list)  # for the TA: overrides the grader now disagrees with, etc.


def connect_scheduler(address: str, timeout: float = 10.0):
    """A Dask client for ``address``; UsageError with the reason when it cannot be reached."""
    from distributed import Client

    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except Exception as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {type(exc).__name__}: {exc}") from None


def run_batch(
    config: BatchConfig,
    *,
    executor: cf.Executor | None = None,
    progress: Callable[[str, NotebookResult | None, int, int], None] | None = None,
    phase: Callable[[str], None] | None = None,
    found: Discovery | None = None,
    zygote: SharedZygote | None = None,
) -> BatchReport:
    """Grade every submission; ``progress`` hears of each one as it finishes, ``phase`` of each slow step.
    ``found``: the submissions as the caller already discovered them (an archive is unpacked once); the
    batch removes what discovering unpacked when it ends. ``zygote``: the one its own workers share, started
    early by the caller (grader.batch.pool.start_early); the batch ends it."""
    try:
        assignment = get_outline(config.assignment)  # the workers load the checks; this process only writes outputs
        if config.lms and config.lms not in LMS_FORMATS:
            raise UsageError(f"unknown LMS {config.lms!r}; known: {', '.join(LMS_FORMATS)}")
        check_storable_db_url(config.db_url)
        check_outdir_assignment(config.outdir, assignment.id)
        if found is None:
            found = discover(
                config.submissions, assignment.id, file_times=config.file_times
            )  # UsageError before anything is written
    except BaseException:
        if zygote is not None:
            zygote.close()
        raise
    client = workers = None
    try:
        window = config.workers or default_workers()
        if executor is None and config.scheduler:
            client = connect_scheduler(config.scheduler)
            executor = client.get_executor()
            window = max(sum(client.nthreads().values()), 1)
        outdir = Path(config.outdir)
        try:
            ensure_writable_dir(outdir)
        except OSError as exc:
            raise OutputNotWritable(outdir, exc.strerror or str(exc)) from None
        if executor is None:  # our own workers: one zygote for all of them, importing torch beside their forkserver
            zygote = zygote or (SharedZygote() if config.backend == "sandbox" else None)
            workers = local_workers(window, assignment.id, zygote)
        else:
            workers = Workers(executor)
        # As many notebooks in flight as can run, plus one waiting: a worker that dies puts only those in doubt.
        policy, late_notes = batch_policy(
            config.late_policy, config.extensions, assignment.id, {j.student: j for j in found.every_job()}
        )
        report = _grade_all(
            config,
            assignment,
            found,
            outdir,
            workers,
            window + 1,
            progress,
            phase or (lambda text: None),
            policy,
            zygote.wait_ready if zygote else (lambda: None),
        )
        report.notes[:0] = late_notes
    finally:
        if workers is not None:
            workers.close()
        if zygote is not None:
            zygote.close()
        if client is not None:
            client.close()
        found.cleanup()
    return report


def _grade_all(
    config,
    assignment,
    found,
    outdir,
    workers: Workers,
    window: int,
    progress,
    phase,
    policy,
    zygote_ready: Callable[[], None],
) -> BatchReport:
    start = time.monotonic()
    report = BatchReport(total=len(found.jobs), skipped=list(found.skipped), layout=found.layout)
    hide = tuple(
        sorted(
            {
                str(Path(config.submissions).resolve()),
                str(outdir.resolve()),
                *([found.workdir] if found.workdir else []),
            }
        )
    )
    pending = {}  # student -> (job, key) of the notebooks to grade
    done = 0
    people = {}
    keys = {}  # student -> cache key of a result worth reusing (none for a notebook the grader failed on)
    marks = load_marks(
        outdir
    )  # a progress line gives the final total: the grader's points with the staff marks that hold

    written = outputs.Written()  # what this run writes as each notebook comes in: its end writes only what changed

    def finished(student: str, result: NotebookResult) -> None:
        nonlocal done
        done += 1
        # the student's result as every output gives it (final_result), reused or graded now: its feedback page
        # is rendered now, while the workers grade, and again at the end only if the staff marks changed it
        shown = final_result(student, result, people[student], marks, keys.get(student, ""), policy).result
        outputs.write_page(outdir, student, shown, written)
        if progress:
            progress(student, shown, done, report.total)

    reused = []
    for job in found.jobs:
        key = cache_key(Path(job.path).read_bytes(), assignment.id, config.limits)
        cached = outputs.read_result(outdir, job.student)
        if cached is not None and cached[1] == key:
            report.results[job.student] = cached[0]
            keys[job.student] = key
            report.reused += 1
            reused.append(job.student)
            continue
        pending[job.student] = (job, key)
    graded = grade_all(
        [job for job, _ in pending.values()],
        workers,
        grade_job,
        lambda job: (job.student, job.path, assignment.id, config.limits, hide, config.backend),
        window=window,
    )
    for job in found.jobs:  # while the workers grade: the notebooks' JSON only (answers, release check)
        facts = read_facts(job.path, assignment)
        people[job.student] = StudentRecord(
            notebook=os.path.basename(job.path),
            name=job.name,
            email=job.email,
            late=job.late,
            release_identical=facts.release_identical,
            answers=facts.answers,
            unanswered=facts.unanswered,
            code_sha256=facts.code_sha256,
            submitted=job.submitted,
            submitted_from=job.submitted_from,
            chosen=job.chosen,
        )
        write_atomic(code_path(outdir, job.student), facts.code)
    # While the workers grade, at the lowest priority: nbgrader's import, the gradebook's tables and grade cells
    # (no result needed), what comparing code imports, then the similarity report, which depends on the notebooks'
    # code only (written; its failure leaves it to be written at the end). It may go on while the outputs are
    # written, up to the summary, which shows it.
    students, compared = [job.student for job in found.jobs], []
    rows = [job.student for job in found.every_job()]
    warm = [lambda: outputs.prepare_gradebook(gradebook_url(config.db_url, outdir), assignment, rows)]
    if len(students) > 1:
        warm.append(similarity_imports)
    nbgrader_import.prefetch_gradebook(
        then=lambda: compared.append(write_similarity(outdir, assignment, students)), warm=warm
    )
    zygote_ready()  # or SandboxError, with the zygote's own words: no notebook could be graded
    for student in reused:
        finished(student, report.results[student])
    for job, payload in graded:
        key = pending[job.student][1]
        if payload["result"] is not None:
            result = NotebookResult.from_dict(payload["result"])
            outputs.write_result(outdir, job.student, result, key, page=False, written=written)  # the page: below
            keys[job.student] = key
            report.graded += 1
        else:
            error = payload["error"]
            reason = error if error.startswith(EXHAUSTED) else f"seqgrade could not grade this notebook: {error}"
            result = missing_result(assignment, os.path.basename(job.path), reason)
            report.failed += 1  # not cached: the next run tries again
        report.results[job.student] = result
        finished(job.student, result)
    workers.release()  # every notebook is in: the workers exit while the outputs are written
    for job in found.unreadable:  # its archive entry could not be unpacked: the row says why
        people[job.student] = StudentRecord(
            notebook=os.path.basename(job.path),
            name=job.name,
            email=job.email,
            late=job.late,
            submitted=job.submitted,
            submitted_from=job.submitted_from,
            chosen=job.chosen,
        )
        report.results[job.student] = missing_result(assignment, os.path.basename(job.path), job.problem)
    for student, job in sorted(found.without_notebook.items()):
        files = found.not_notebooks[student]
        people[student] = StudentRecord(
            notebook=os.path.basename(job.path), name=job.name, email=job.email, late=job.late, no_notebook=files
        )
        report.results[student] = missing_result(assignment, os.path.basename(job.path), no_notebook_reason(files))
    record = BatchRecord(
        assignment=assignment.id,
        layout=found.layout,
        db_url=config.db_url or "",
        gradescope=config.gradescope,
        lms=config.lms,
        students=people,
        skipped=tuple(tuple(s) for s in report.skipped),
        late_policy=policy.to_dict() if policy else {},
    )
    if policy:
        phase(f"late policy: {policy.describe()}")

    def similarity_written() -> None:  # before the summary, which shows its clusters
        nbgrader_import.background_done()
        if not compared:
            phase(f"comparing the code of {len(students)} notebooks (similarity)")
            write_similarity(outdir, assignment, students)

    write_record(outdir, record)
    report.results, report.notes = publish(
        outdir, assignment, record, report.results, keys, phase, similarity_written, written
    )
    report.seconds = time.monotonic() - start
    return report
