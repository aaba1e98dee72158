"""A cell is stopped by its CPU budget, or once it has computed nothing for cell_timeout_s; the notebook's time is
its only wall-clock limit. So a cell that computes is never cut short by wall time (on a loaded machine it waits
for a CPU), and one that sleeps still is."""

import pytest

from grader.jail.limits import Limits
from tests.grader.jail_session import open_session

COMPUTES = """
import time
start = time.process_time()
while time.process_time() - start < 1.5:  # 1.5 s of CPU: past cell_timeout_s of wall time, within the budget
    sum(range(1000))
DONE = True
"""
LIMITS = Limits(cell_cpu_s=5, cell_timeout_s=1, submission_timeout_s=60)


@pytest.mark.parametrize(
    "cell,status",
    [(COMPUTES, "ok"), ("import time\ntime.sleep(30)", "timeout"), ("while True:\n    pass", "timeout")],
    ids=["computes longer than cell_timeout_s", "sleeps", "spins past its CPU budget"],
)
def test_a_cell_is_stopped_for_cpu_or_for_waiting_never_for_wall_time_alone(cell, status):
    with open_session(["x = 1", cell], LIMITS) as session:
        assert session.reports()[1]["status"] == status, session.reports()
