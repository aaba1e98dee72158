"""A grading thread and its jail take turns, so they run on one CPU (grader.sandbox.cpus); a batch's workers
each get a CPU of their own. Only where the work runs changes, never what is measured."""

import multiprocessing
import os

import pytest

from grader.batch import worker
from grader.jail.limits import Limits
from grader.sandbox import cpus
from grader.sandbox.client import Session
from grader.sandbox.jails import Zygote

TWO_CPUS = pytest.mark.skipif(len(cpus.allowed()) < 2, reason="needs a machine that lets this process use two CPUs")
CELLS = [
    (
        0,
        """
import os
def where():
    return sorted(os.sched_getaffinity(0))
""",
    )
]


def test_workers_numbered_in_a_pool_get_different_cpus():
    allowed = cpus.allowed()
    if len(allowed) < 2:
        assert cpus.cpu_for(0) is None and cpus.cpu_for(None) is None
        return
    chosen = [cpus.cpu_for(i) for i in range(len(allowed))]
    assert sorted(chosen) == allowed
    assert cpus.cpu_for(len(allowed)) == chosen[0]  # more workers than CPUs: they share, in turn
    assert cpus.cpu_for(None) in allowed  # a lone grader: the CPU it runs on


def test_start_worker_takes_the_next_number():
    counter = multiprocessing.get_context("fork").Value("i", 0)
    saved = (worker._CPU_INDEX, worker._SHARED_ZYGOTE)
    try:
        numbers = []
        for _ in range(3):
            worker.start_worker(None, None, counter)
            numbers.append(worker._CPU_INDEX)
        assert numbers == [0, 1, 2]
    finally:
        worker._CPU_INDEX, worker._SHARED_ZYGOTE = saved


@TWO_CPUS
def test_pinned_gives_the_thread_its_cpus_back():
    before = os.sched_getaffinity(0)
    target = cpus.allowed()[-1]
    with cpus.pinned(target):
        assert os.sched_getaffinity(0) == {target}
    assert os.sched_getaffinity(0) == before
    with cpus.pinned(None):
        assert os.sched_getaffinity(0) == before


@TWO_CPUS
@pytest.mark.parametrize("position", [0, -1])
def test_the_jail_runs_on_the_cpu_it_was_given(position):
    target = cpus.allowed()[position]
    with Zygote() as zygote:
        session = Session(zygote, CELLS, Limits(call_timeout_s=5, submission_timeout_s=60))
        try:
            with cpus.pinned(target):  # a jail runs where the thread that asked for it may run
                session.open()
            assert session.call("where", []).value == [target]
        finally:
            session.close()
