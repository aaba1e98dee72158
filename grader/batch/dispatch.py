"""Hand notebooks to workers so that no notebook can cost another its grade.

A batch is a set of independent rows. When a worker process dies (the kernel's out-of-memory killer, a
signal), a local process pool fails every notebook it still held, most of them innocent. So:

- notebooks go to the workers a few at a time (``window``: as many as can run, plus one waiting), so a
  death puts at most that many in doubt;
- a pool that broke is replaced (when it is ours) and grading goes on;
- the notebooks in doubt are graded again one at a time, alone in a worker; only one whose worker dies
  twice while it is alone is reported as exhausting the grader (:data:`EXHAUSTED`), and that row is not
  cached, so the next run tries it again.

Any ``concurrent.futures.Executor`` works: a Dask cluster's executor reschedules a dead worker's tasks
itself and reports a task that keeps killing workers as an error, which lands here the same way.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections import deque
from typing import Callable, Iterator, Sequence, TypeVar

Job = TypeVar("Job")

EXHAUSTED = "not graded: grading this notebook exhausted the grader's resources (its worker process died"


class Workers:
    """The executor notebooks are graded on: one the caller gave (used as it is), or our own, made by
    ``make`` when the first notebook is handed in (a batch that reuses every result makes none) and
    replaced whenever it breaks."""

    def __init__(self, executor: cf.Executor | None = None, make: Callable[[], cf.Executor] | None = None):
        if executor is None and make is None:
            raise ValueError("Workers needs an executor or a way to make one")
        self.make = None if executor is not None else make
        self.executor = executor

    def submit(self, fn, *args) -> cf.Future:
        if self.executor is None:
            self.executor = self.make()
        try:
            return self.executor.submit(fn, *args)
        except cf.BrokenExecutor:
            if self.make is None:
                raise
            self.renew()
            return self.executor.submit(fn, *args)

    def renew(self) -> None:
        """Replace our executor after one of its workers died (a caller's executor is left alone)."""
        if self.make is None:
            return
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
        self.executor = self.make()

    def release(self) -> None:
        """No more notebooks: our workers exit (closing their sandboxes) while the caller goes on."""
        if self.make is not None and self.executor is not None:
            self.executor.shutdown(wait=False)

    def close(self) -> None:
        if self.make is not None and self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)


def _failure(future: cf.Future) -> BaseException | None:
    try:
        return future.exception()
    except cf.CancelledError as exc:
        return exc


def grade_all(
    jobs: Sequence[Job], workers: Workers, fn: Callable, args: Callable[[Job], tuple], *, window: int
) -> Iterator[tuple[Job, dict]]:
    """Start grading ``jobs`` now and yield ``(job, payload)`` for each as it finishes, where ``payload`` is
    what ``fn(*args(job))`` returned, or ``{"result": None, "error": ...}`` when its worker died even when
    it was graded alone. The first ``window`` jobs are submitted by a thread of their own (starting a pool's
    first process waits for its forkserver to import torch), so the caller's own work overlaps theirs."""
    flight = _Flight(jobs, workers, fn, args, max(window, 1))
    starting = threading.Thread(target=flight.fill, daemon=True)
    starting.start()
    return flight.drain(starting)


class _Flight:
    def __init__(self, jobs, workers: Workers, fn: Callable, args: Callable, window: int):
        self.queue, self.workers, self.fn, self.args, self.window = deque(jobs), workers, fn, args, window
        self.in_flight: dict[cf.Future, object] = {}
        self.doubtful: list = []

    def fill(self) -> None:
        while self.queue and len(self.in_flight) < self.window:
            job = self.queue.popleft()
            try:
                self.in_flight[self.workers.submit(self.fn, *self.args(job))] = job
            except Exception:  # a caller's executor that no longer takes work: graded alone below
                self.doubtful.append(job)

    def drain(self, starting: threading.Thread) -> Iterator[tuple[object, dict]]:
        starting.join()  # the first jobs are all submitted (or in doubt) before any is waited for
        while self.in_flight:
            done, _ = cf.wait(self.in_flight, return_when=cf.FIRST_COMPLETED)
            broke = False
            for future in done:
                job = self.in_flight.pop(future)
                failure = _failure(future)
                if failure is None:
                    yield job, future.result()
                else:
                    self.doubtful.append(job)
                    broke = broke or isinstance(failure, cf.BrokenExecutor)
            if broke:  # every notebook still in that pool fails with it: wait for them, then start a new pool
                cf.wait(self.in_flight)
                for future, job in self.in_flight.items():
                    if _failure(future) is None:
                        yield job, future.result()
                    else:
                        self.doubtful.append(job)
                self.in_flight.clear()
                self.workers.renew()
            self.fill()
        for job in self.doubtful:  # alone in a worker: a second death is this notebook's doing
            yield job, _alone(job, self.workers, self.fn, self.args)


def _alone(job, workers: Workers, fn: Callable, args: Callable, tries: int = 2) -> dict:
    """Grade ``job`` with nothing else in flight, up to ``tries`` times: a notebook that was only queued when
    a pool broke has not killed anything yet, so it is reported only when it kills a worker of its own twice."""
    detail = ""
    for _ in range(tries):
        try:
            future = workers.submit(fn, *args(job))
        except Exception as exc:
            return {"result": None, "error": f"{EXHAUSTED}: {type(exc).__name__}: {exc})"}
        failure = _failure(future)
        if failure is None:
            return future.result()
        if isinstance(failure, cf.BrokenExecutor):
            workers.renew()
        detail = str(failure) or type(failure).__name__
    return {"result": None, "error": f"{EXHAUSTED} {tries} times while grading it alone: {detail[:300]})"}
