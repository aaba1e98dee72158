"""A worker that dies costs only the notebook that killed it (grader.batch.dispatch): the others it held
are graded again, alone, and only a notebook whose worker dies a second time is reported as exhausting
the grader."""

import concurrent.futures as cf
import multiprocessing
import os
from pathlib import Path

import pytest

from grader.batch.dispatch import EXHAUSTED, Workers, grade_all


def grade(job: str, marks: str) -> dict:
    """A stand-in for grading one notebook: 'poison' kills its worker every time, 'once' the first time only."""
    if job == "poison" or (job == "once" and not Path(marks, "once").exists()):
        Path(marks, job).touch()
        os._exit(9)  # as the out-of-memory killer would end it: no exception, no reply
    return {"result": {"job": job, "pid": os.getpid()}, "error": None}


def _pool():
    return cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))


def _run(jobs, workers, tmp_path):
    return dict(grade_all(jobs, workers, grade, lambda job: (job, str(tmp_path)), window=3))


def test_a_dying_worker_costs_only_its_own_notebook(tmp_path):
    jobs = ["a", "b", "poison", "c", "d", "once", "e"]
    workers = Workers(make=_pool)
    try:
        got = _run(jobs, workers, tmp_path)
    finally:
        workers.close()
    assert set(got) == set(jobs)
    assert {j for j, p in got.items() if p["result"] is not None} == set(jobs) - {"poison"}
    assert got["poison"]["result"] is None and got["poison"]["error"].startswith(EXHAUSTED)
    assert "2 times while grading it alone" in got["poison"]["error"]


def test_without_a_death_every_notebook_is_graded_once(tmp_path):
    workers = Workers(make=_pool)
    try:
        got = list(grade_all([f"n{i}" for i in range(6)], workers, grade, lambda job: (job, str(tmp_path)), window=3))
    finally:
        workers.close()
    assert sorted(job for job, _ in got) == [f"n{i}" for i in range(6)]
    assert all(p["result"]["job"] == job for job, p in got)


def test_a_callers_executor_is_used_as_it_is(tmp_path):
    with cf.ThreadPoolExecutor(2) as pool:
        got = dict(
            grade_all(
                ["x", "y"], Workers(pool), lambda job: {"result": job, "error": None}, lambda job: (job,), window=1
            )
        )
    assert got == {"x": {"result": "x", "error": None}, "y": {"result": "y", "error": None}}


@pytest.mark.slow
def test_a_dask_worker_that_dies_costs_only_its_notebook(tmp_path):
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        got = _run(["a", "poison", "b", "c"], Workers(client.get_executor()), tmp_path)
    assert {j for j, p in got.items() if p["result"] is not None} == {"a", "b", "c"}
    assert got["poison"]["error"].startswith(EXHAUSTED)
