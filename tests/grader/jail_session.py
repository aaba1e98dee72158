"""One zygote for a test module (as in a batch) and a session on it, for the tests of the sandbox."""
import os

import pytest

from grader.assignments.registry import SEQUENCE_MODELS
from grader.jail.limits import Limits
from grader.judge import judge_exercise
from grader.sandbox.client import Session, Zygote

LIMITS = Limits(call_timeout_s=3, cell_cpu_s=2, cell_timeout_s=3, submission_timeout_s=60)
SLOT = 7


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    z = Zygote(slot=SLOT, hide=[str(tmp_path_factory.getbasetemp())])
    z.wait_ready()
    yield z
    z.close()


def run(zygote, *sources, limits=LIMITS):
    session = Session(zygote, [(i, s) for i, s in enumerate(sources)], limits).open()
    return session


def score(session, exercise_id):
    return list(judge_exercise(SEQUENCE_MODELS.exercise(exercise_id), session).checks)


def sandbox_processes():
    uid = 60000 + SLOT
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                found.append(pid)
        except FileNotFoundError:
            pass
    return found


