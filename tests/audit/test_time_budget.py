"""The audit's self-check budget counts CPU time, so a verdict does not depend on the machine's load; the wall clock
stops only code that sleeps far past it."""

import time

import pytest

from grader.audit.selfchecks import OutOfTime, time_budget


def test_a_loop_that_spins_past_its_cpu_budget_is_stopped():
    with pytest.raises(OutOfTime):
        with time_budget(0.2):
            while True:
                pass


def test_waiting_without_computing_spends_no_budget_until_the_wall_clock_backstop():
    with time_budget(0.1):
        time.sleep(0.3)  # three times the budget in wall-clock time, no CPU: a loaded machine looks like this
    with pytest.raises(OutOfTime):
        with time_budget(0.05):
            time.sleep(1.0)  # ten times the budget on the wall clock
