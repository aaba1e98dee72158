"""Slots (grader.sandbox.slots): no two live grading processes share a sandbox uid, whoever starts them, and a
slot is free again once the process holding it has ended."""

import subprocess
import sys

from grader.sandbox import slots
from grader.sandbox.client import Zygote

HOLD = """
import sys
from grader.sandbox import slots
print(slots.claim(int(sys.argv[1])), flush=True)
sys.stdin.read()  # hold the slot until the test closes our stdin
"""


def _holder(start: int) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(start)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    return proc, int(proc.stdout.readline())


def test_processes_that_ask_for_the_same_slot_get_different_ones_and_an_ended_ones_slot_is_free_again():
    start = 4321
    first, a = _holder(start)
    try:
        second, b = _holder(start)
        try:
            assert a == start and b != a
            mine = slots.claim(start)  # this process too
            slots.release(mine)
            assert mine not in (a, b)
        finally:
            second.stdin.close()
            second.wait()
    finally:
        first.stdin.close()
        first.wait()
    third, c = _holder(start)  # the first holder has ended: its slot is taken again
    third.stdin.close()
    third.wait()
    assert c == start


def test_zygotes_made_without_a_slot_each_get_their_own_and_give_it_back():
    with Zygote(launched=(None, None)) as one, Zygote(launched=(None, None)) as two:
        assert one.slot != two.slot
        held = one.slot
    assert slots.claim(held) == held
    slots.release(held)
